"""AppBench's 15 apps and 33 APIs: arguments, defaults and returned values, in our own words.

The names (apps, APIs, arguments, returned arguments) are AppBench's, which follow the intents and
slots of the Schema-Guided Dialogue services; the defaults are those services' optional-slot
defaults (``dontcare``: no filter). One line per API in ``TABLE``:
``App.api  T|Q | required name:type, ... | optional name:type=default, ... | returns ... | what it does``.
``findmovies`` belongs to two apps (Media and Movies), with different arguments.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

TYPES = ("str", "int", "float", "bool", "date", "time")
ANY = "dontcare"

TABLE = """
Hotels.bookhouse T | where_to:str, number_of_adults:int, check_in_date:date, check_out_date:date | | where_to, number_of_adults, check_in_date, check_out_date, rating, address, phone_number, total_price, has_laundry_service | Book a house to stay in a city for some guests between two dates.
Hotels.searchhouse Q | where_to:str | has_laundry_service:bool=dontcare, number_of_adults:int=dontcare, rating:float=dontcare | where_to, number_of_adults, rating, address, phone_number, total_price, has_laundry_service | Look for houses to stay in within a city, with an optional minimum rating and laundry.
Rents.getcarsavailable Q | city:str, start_date:date, pickup_time:time, end_date:date | car_type:str=dontcare | car_type, car_name, pickup_location, start_date, pickup_time, city, end_date, price_per_day | List rental cars that can be picked up in a city for a period.
Rents.reservecar T | pickup_location:str, start_date:date, pickup_time:time, end_date:date, car_type:str, add_insurance:bool | | car_type, car_name, pickup_location, start_date, pickup_time, end_date, price_per_day, add_insurance | Reserve a rental car of a type at a pickup location for a period.
Rents.getride T | destination:str, number_of_seats:int, ride_type:str | | destination, ride_type, ride_fare, wait_time, number_of_seats | Call a shared or private ride to a destination.
Buses.findbus Q | from_city:str, to_city:str, departure_date:date | num_passengers:int=1, category:str=direct | from_city, to_city, from_station, to_station, departure_date, departure_time, price, num_passengers, category | Find buses between two cities on a date.
Buses.buybusticket T | from_city:str, to_city:str, departure_date:date, departure_time:time, num_passengers:int | additional_luggage:bool=False | from_city, to_city, from_station, to_station, departure_date, departure_time, price, additional_luggage, num_passengers, category | Buy bus tickets for a departure between two cities.
Events.findevents Q | event_type:str, city:str | date:date=dontcare | event_type, event_name, date, time, price_per_ticket, city, venue, venue_address | Find concerts, sports and theater events in a city, on a date if given.
Events.buyeventtickets Q | event_name:str, number_of_tickets:int, date:date, city:str | | event_name, date, time, number_of_tickets, price_per_ticket, city, venue, venue_address | Buy tickets for an event on its date.
Flights.searchonewayflight Q | origin_airport:str, destination_airport:str, departure_date:date | seating_class:str=Economy, number_of_tickets:int=1, airlines:str=dontcare | number_of_tickets, seating_class, origin_airport, destination_airport, departure_date, is_nonstop, outbound_departure_time, outbound_arrival_time, price, airlines | Search one-way flights between two cities or airports.
Flights.searchroundtripflights Q | origin_airport:str, destination_airport:str, departure_date:date, return_date:date | seating_class:str=Economy, number_of_tickets:int=1, airlines:str=dontcare | number_of_tickets, seating_class, origin_airport, destination_airport, departure_date, return_date, is_nonstop, outbound_departure_time, outbound_arrival_time, inbound_arrival_time, inbound_departure_time, price, airlines | Search return flights between two cities or airports.
Homes.findhomebyarea Q | area:str, intent:str, number_of_beds:int, number_of_baths:int | has_garage:bool=dontcare, in_unit_laundry:bool=dontcare | intent, area, address, property_name, phone_number, has_garage, in_unit_laundry, price, number_of_beds, number_of_baths | Find homes to rent or buy in an area with a number of bedrooms and bathrooms.
Homes.schedulevisit T | property_name:str, visit_date:date | | address, property_name, phone_number, has_garage, in_unit_laundry, price, visit_date, number_of_beds, number_of_baths | Book a visit to a property on a date.
Media.findmovies Q | genre:str | starring:str=dontcare | title, genre, subtitle_language, starring | Find movies to stream by genre, and actor if given.
Media.playmovie Q | title:str | subtitle_language:str=English | title, genre, subtitle_language, starring | Start streaming a movie, with subtitles in a language.
Movies.buymovietickets T | movie_name:str, number_of_tickets:int, show_date:date, location:str, show_time:time, show_type:str | | price, number_of_tickets, show_type, theater_name, show_time, show_date, genre, street_address, location, movie_name | Buy cinema tickets for a showing.
Movies.findmovies Q | location:str | theater_name:str=dontcare, genre:str=dontcare, show_type:str=dontcare | price, show_type, theater_name, genre, street_address, location, movie_name | Find movies showing in cinemas in a city.
Movies.gettimesformovie Q | movie_name:str, location:str, show_date:date | theater_name:str=dontcare, show_type:str=dontcare | price, show_type, theater_name, show_time, show_date, genre, street_address, location, movie_name | Find the showtimes of a movie in a city on a date.
Movies.reviewmovies Q | | directed_by:str=dontcare, genre:str=dontcare, cast:str=dontcare | movie_title, genre, percent_rating, cast, directed_by | Look up movies and their critics' rating by director, genre or cast.
Music.playmedia T | track:str | artist:str=dontcare, device:str=Living room, album:str=dontcare | track, artist, album, genre, year, device | Play a song on a device.
Music.lookupmusic Q | | artist:str=dontcare, album:str=dontcare, genre:str=dontcare, year:str=dontcare | track, artist, album, genre, year | Find songs by artist, album, genre or year.
Payment.requestpayment T | receiver:str, amount:float | private_visibility:bool=False | amount, receiver, private_visibility | Ask a contact to pay an amount.
Payment.makepayment T | payment_method:str, amount:float, receiver:str | private_visibility:bool=False | payment_method, amount, receiver, private_visibility | Send an amount to a contact from a payment method.
Restaurants.reserverestaurant T | restaurant_name:str, location:str, time:time | number_of_seats:int=2, date:date=2019-03-01 | restaurant_name, date, time, has_seating_outdoors, has_vegetarian_options, phone_number, rating, address, number_of_seats, price_range, location, category | Reserve a table at a restaurant.
Restaurants.findrestaurants Q | category:str, location:str | price_range:str=dontcare, has_vegetarian_options:bool=dontcare, has_seating_outdoors:bool=dontcare | restaurant_name, has_seating_outdoors, has_vegetarian_options, phone_number, rating, address, price_range, location, category | Find restaurants of a cuisine in a city.
Services.book_stylist_appointment T | stylist_name:str, appointment_time:time, appointment_date:date | | stylist_name, phone_number, average_rating, is_unisex, street_address, appointment_date, appointment_time | Book an appointment with a hair stylist.
Services.find_stylist_provider Q | city:str | is_unisex:bool=dontcare | stylist_name, phone_number, average_rating, is_unisex, street_address, city | Find hair stylists in a city.
Services.book_therapist_appointment T | therapist_name:str, appointment_time:time, appointment_date:date | | therapist_name, phone_number, address, appointment_date, appointment_time | Book an appointment with a therapist.
Services.find_therapist_provider Q | city:str, type:str | | therapist_name, phone_number, address, city, type | Find therapists of a kind in a city.
Trains.gettraintickets T | from:str, to:str, date_of_journey:date, journey_start_time:time, number_of_adults:int, trip_protection:bool | class:str=Value | from, to, from_station, to_station, date_of_journey, journey_start_time, total, number_of_adults, class, trip_protection | Buy train tickets for a departure.
Trains.findtrains Q | from:str, to:str, date_of_journey:date | class:str=Value, number_of_adults:int=1 | from, to, from_station, to_station, date_of_journey, journey_start_time, total, number_of_adults, class, trip_protection | Find trains between two cities on a date.
Travel.findattractions Q | location:str | free_entry:bool=dontcare, category:str=dontcare, good_for_kids:bool=dontcare | location, attraction_name, category, phone_number, free_entry, good_for_kids | Find places to visit in a city.
Weather.getweather Q | city:str | date:date=2019-03-01 | precipitation, humidity, wind, temperature, city, date | Get the weather forecast of a city on a date.
"""

#: One line per app, in AppBench's order: what it is for (for the app-selection step).
APP_DESCRIPTIONS = {
    "Hotels": "Find and book houses to stay in while travelling.",
    "Rents": "Rent cars for a period, and call shared or private rides.",
    "Buses": "Find and buy intercity bus tickets.",
    "Events": "Find concerts, games and shows in a city, and buy tickets.",
    "Flights": "Search one-way and return flights.",
    "Homes": "Find homes to rent or buy, and schedule visits.",
    "Media": "Find movies to stream at home, and play them.",
    "Movies": "Find movies in cinemas and their showtimes, buy tickets, and read critics' ratings.",
    "Music": "Find songs and play them on a device.",
    "Payment": "Send money to contacts and ask them for money.",
    "Restaurants": "Find restaurants and reserve tables.",
    "Services": "Find hair stylists and therapists, and book appointments.",
    "Trains": "Find and buy train tickets.",
    "Travel": "Find attractions to visit in a city.",
    "Weather": "Get weather forecasts.",
}


@dataclass(frozen=True)
class Api:
    app: str
    name: str
    transactional: bool
    required: tuple[tuple[str, str], ...]  # (argument, type)
    optional: tuple[tuple[str, str, str], ...]  # (argument, type, default)
    returns: tuple[str, ...]
    description: str

    @property
    def key(self) -> str:
        """The tool name of this API: ``<app>__<api>``."""
        return f"{self.app}__{self.name}"

    def arguments(self) -> dict[str, str]:
        """Every argument and its type."""
        return {**dict(self.required), **{name: kind for name, kind, _ in self.optional}}


def _pairs(text: str) -> list[list[str]]:
    return [part.strip().split(":", 1) for part in text.split(",") if part.strip()]


@cache
def apis() -> tuple[Api, ...]:
    """The 33 APIs, in AppBench's app order."""
    found = []
    for line in TABLE.strip().splitlines():
        head, required, optional, returns, description = (part.strip() for part in line.split("|"))
        qualified, kind = head.split()
        app, name = qualified.split(".")
        optional_args = []
        for argument, rest in _pairs(optional):
            arg_type, default = rest.split("=", 1)
            optional_args.append((argument, arg_type, default))
        found.append(
            Api(
                app=app,
                name=name,
                transactional=kind == "T",
                required=tuple((argument, arg_type) for argument, arg_type in _pairs(required)),
                optional=tuple(optional_args),
                returns=tuple(part.strip() for part in returns.split(",")),
                description=description,
            )
        )
    return tuple(found)


@cache
def by_app() -> dict[str, dict[str, Api]]:
    """App -> API name -> API (the owner of each API: the permission rule)."""
    table: dict[str, dict[str, Api]] = {app: {} for app in APP_DESCRIPTIONS}
    for api in apis():
        table[api.app][api.name] = api
    return table


def owners(api_name: str) -> list[str]:
    """The apps that own an API name (two for ``findmovies``)."""
    return [app for app, owned in by_app().items() if api_name in owned]
