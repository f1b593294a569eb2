"""OpenWeather condition codes: group, icon and the description in each supported language.

The codes, groups and icon numbers are the real API's; the translations follow the wording the
real service uses for these languages. Unknown ``lang`` values fall back to English, as the real
service does.
"""

from __future__ import annotations

from dataclasses import dataclass

LANGUAGES = ("en", "fr", "zh_cn", "it", "de", "ru", "ja", "nl")


@dataclass(frozen=True)
class Condition:
    code: int
    main: str
    icon: str  # without the d/n suffix
    descriptions: dict[str, str]

    def description(self, lang: str) -> str:
        return self.descriptions.get(lang, self.descriptions["en"])


def _condition(code: int, main: str, icon: str, *texts: str) -> Condition:
    return Condition(code, main, icon, dict(zip(LANGUAGES, texts, strict=True)))


# fmt: off
CONDITIONS: dict[int, Condition] = {c.code: c for c in (
    _condition(200, "Thunderstorm", "11", "thunderstorm with light rain", "orage et pluie fine", "雷阵雨伴小雨",
               "temporale con pioggerella", "Gewitter mit leichtem Regen", "гроза с небольшим дождём",
               "小雨を伴う雷雨", "onweersbui met lichte regen"),
    _condition(201, "Thunderstorm", "11", "thunderstorm with rain", "orage et pluie", "雷阵雨",
               "temporale con pioggia", "Gewitter mit Regen", "гроза с дождём", "雨を伴う雷雨",
               "onweersbui met regen"),
    _condition(211, "Thunderstorm", "11", "thunderstorm", "orage", "雷暴", "temporale", "Gewitter", "гроза", "雷雨",
               "onweersbui"),
    _condition(300, "Drizzle", "09", "light intensity drizzle", "bruine légère", "毛毛雨", "pioggerellina",
               "leichter Nieselregen", "слабая морось", "弱い霧雨", "lichte motregen"),
    _condition(301, "Drizzle", "09", "drizzle", "bruine", "细雨", "pioviggine", "Nieselregen", "морось", "霧雨",
               "motregen"),
    _condition(500, "Rain", "10", "light rain", "légère pluie", "小雨", "pioggia leggera", "leichter Regen",
               "небольшой дождь", "小雨", "lichte regen"),
    _condition(501, "Rain", "10", "moderate rain", "pluie modérée", "中雨", "pioggia moderata", "mäßiger Regen",
               "дождь", "適度な雨", "matige regen"),
    _condition(502, "Rain", "10", "heavy intensity rain", "forte pluie", "大雨", "pioggia intensa", "starker Regen",
               "сильный дождь", "強い雨", "zware regen"),
    _condition(520, "Rain", "09", "light intensity shower rain", "averses de pluie légères", "阵雨",
               "pioggia leggera a tratti", "leichte Regenschauer", "небольшой ливень", "弱いにわか雨",
               "lichte regenbuien"),
    _condition(600, "Snow", "13", "light snow", "légères chutes de neige", "小雪", "neve leggera",
               "leichter Schneefall", "небольшой снег", "小雪", "lichte sneeuw"),
    _condition(601, "Snow", "13", "snow", "neige", "中雪", "neve", "Schnee", "снег", "雪", "sneeuw"),
    _condition(602, "Snow", "13", "heavy snow", "fortes chutes de neige", "大雪", "forte nevicata",
               "starker Schneefall", "сильный снег", "大雪", "zware sneeuw"),
    _condition(611, "Snow", "13", "sleet", "neige fondue", "雨夹雪", "nevischio", "Schneeregen", "мокрый снег",
               "みぞれ", "natte sneeuw"),
    _condition(701, "Mist", "50", "mist", "brume", "薄雾", "foschia", "trüb", "дымка", "靄", "nevel"),
    _condition(721, "Haze", "50", "haze", "brume sèche", "霾", "caligine", "Dunst", "мгла", "煙霧", "waas"),
    _condition(741, "Fog", "50", "fog", "brouillard", "雾", "nebbia", "Nebel", "туман", "霧", "mist"),
    _condition(800, "Clear", "01", "clear sky", "ciel dégagé", "晴", "cielo sereno", "Klarer Himmel", "ясно",
               "晴天", "onbewolkt"),
    _condition(801, "Clouds", "02", "few clouds", "peu nuageux", "少云", "poche nuvole", "Ein paar Wolken",
               "небольшая облачность", "薄い雲", "licht bewolkt"),
    _condition(802, "Clouds", "03", "scattered clouds", "partiellement nuageux", "散云", "nubi sparse",
               "Mäßig bewölkt", "переменная облачность", "雲", "half bewolkt"),
    _condition(803, "Clouds", "04", "broken clouds", "nuageux", "多云", "nuvoloso", "Überwiegend bewölkt",
               "облачно с прояснениями", "曇りがち", "zwaar bewolkt"),
    _condition(804, "Clouds", "04", "overcast clouds", "couvert", "阴，多云", "cielo coperto", "Bedeckt",
               "пасмурно", "厚い雲", "bewolkt"),
)}
# fmt: on

# Beaufort scale names (used by the XML format), upper bounds in m/s.
BEAUFORT = (
    (0.5, "Calm"),
    (1.5, "Light air"),
    (3.3, "Light breeze"),
    (5.5, "Gentle Breeze"),
    (7.9, "Moderate breeze"),
    (10.7, "Fresh Breeze"),
    (13.8, "Strong breeze"),
    (17.1, "High wind, near gale"),
    (20.7, "Gale"),
    (24.4, "Severe Gale"),
    (28.4, "Storm"),
    (32.6, "Violent Storm"),
    (float("inf"), "Hurricane"),
)

COMPASS = (
    ("N", "North"),
    ("NNE", "North-northeast"),
    ("NE", "NorthEast"),
    ("ENE", "East-northeast"),
    ("E", "East"),
    ("ESE", "East-southeast"),
    ("SE", "SouthEast"),
    ("SSE", "South-southeast"),
    ("S", "South"),
    ("SSW", "South-southwest"),
    ("SW", "Southwest"),
    ("WSW", "West-southwest"),
    ("W", "West"),
    ("WNW", "West-northwest"),
    ("NW", "Northwest"),
    ("NNW", "North-northwest"),
)


def beaufort_name(speed_ms: float) -> str:
    return next(name for bound, name in BEAUFORT if speed_ms < bound)


def compass_point(degrees: int) -> tuple[str, str]:
    return COMPASS[int((degrees % 360) / 22.5 + 0.5) % 16]
