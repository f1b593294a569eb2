"""A local Trip Booking: the ToolBench criteria API over a database of trips and hotel rooms."""

from toolbench.mock_services.trip_booking.api import CONSTRUCTORS, FUNCTIONS, Date, Loc, TripBookingAPI
from toolbench.mock_services.trip_booking.travel import MODES, ROOM_TYPES, TravelDB, load_travel_db

__all__ = [
    "CONSTRUCTORS",
    "FUNCTIONS",
    "MODES",
    "ROOM_TYPES",
    "Date",
    "Loc",
    "TravelDB",
    "TripBookingAPI",
    "load_travel_db",
]
