"""Stock ``requests`` calls against The Cat API fake served on loopback get the real service's shapes.

Breeds carry their reference image and the reference links the real breeds have; image search
results always carry ``breeds`` (``[]`` when the picture shows no known breed), as documented.
"""

import pytest
import requests

from toolbench.core.transport import ServedApp
from toolbench.mock_services.catapi import DEMO_API_KEY, CatStore, create_app, load_initial_account

HEADERS = {"x-api-key": DEMO_API_KEY}
CDN = "https://cdn2.thecatapi.com/images/"


@pytest.fixture(scope="module")
def base_url():
    with ServedApp(create_app(CatStore({DEMO_API_KEY: load_initial_account()}))) as served:
        yield served.url + "/v1"


def get(base_url: str, path: str, **params):
    response = requests.get(base_url + path, params=params, headers=HEADERS, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def test_every_breed_has_its_reference_image(base_url):
    breeds = get(base_url, "/breeds")
    assert len(breeds) == 67
    for breed in breeds:
        image = breed["image"]
        assert list(image) == ["id", "width", "height", "url"]
        assert image["id"] == breed["reference_image_id"] and image["url"].startswith(CDN + image["id"] + ".")
        assert image["width"] > 0 and image["height"] > 0
        # the image is a real picture of the library, showing that breed
        picture = get(base_url, f"/images/{image['id']}")
        assert (picture["url"], picture["width"], picture["height"]) == (image["url"], image["width"], image["height"])
        assert breed["id"] in [b["id"] for b in picture["breeds"]]
    assert get(base_url, "/breeds/abys") == next(b for b in breeds if b["id"] == "abys")


def test_breeds_carry_the_real_reference_urls(base_url):
    abyssinian = get(base_url, "/breeds/abys")
    assert abyssinian["cfa_url"] == "http://cfa.org/Breeds/BreedsAB/Abyssinian.aspx"
    assert abyssinian["vetstreet_url"] == "http://www.vetstreet.com/cats/abyssinian"
    assert abyssinian["vcahospitals_url"] == "https://vcahospitals.com/know-your-pet/cat-breeds/abyssinian"
    assert abyssinian["wikipedia_url"] == "https://en.wikipedia.org/wiki/Abyssinian_(cat)"
    assert get(base_url, "/breeds/beng")["wikipedia_url"] == "https://en.wikipedia.org/wiki/Bengal_(cat)"
    assert get(base_url, "/breeds/mcoo")["alt_names"].startswith("Coon Cat")


def test_links_the_real_breed_lacks_are_absent(base_url):
    york = get(base_url, "/breeds/ycho")
    assert york["wikipedia_url"] == "https://en.wikipedia.org/wiki/York_Chocolate"
    assert not {"cfa_url", "vetstreet_url", "vcahospitals_url"} & set(york)
    assert "wikipedia_url" not in get(base_url, "/breeds/ebur")  # European Burmese has none
    with_cfa = [b for b in get(base_url, "/breeds") if "cfa_url" in b]
    assert 30 < len(with_cfa) < 67


def test_breed_fields_come_in_the_real_order(base_url):
    keys = list(get(base_url, "/breeds/abys"))
    assert keys[:6] == ["weight", "id", "name", "cfa_url", "vetstreet_url", "vcahospitals_url"]
    assert keys[-4:] == ["wikipedia_url", "hypoallergenic", "reference_image_id", "image"]


def test_image_search_results_carry_empty_breeds(base_url):
    images = get(base_url, "/images/search", limit=100, order="ASC")
    assert all("breeds" in image for image in images)
    plain = [image for image in images if not image["breeds"]]
    assert plain and all(image["breeds"] == [] for image in plain)
    assert list(plain[0])[:5] == ["id", "url", "width", "height", "breeds"]
    hats = get(base_url, "/images/search", category_ids=1, limit=5)
    assert hats and all(image["breeds"] == [] for image in hats)


def test_breeds_inside_images_and_search_leave_out_the_image(base_url):
    (bengal_picture,) = get(base_url, "/images/search", breed_ids="beng", limit=1)
    (breed,) = bengal_picture["breeds"]
    assert breed["id"] == "beng" and "image" not in breed and "reference_image_id" in breed
    assert breed["cfa_url"] == "http://cfa.org/Breeds/BreedsAB/Bengal.aspx"
    (found,) = get(base_url, "/breeds/search", q="bengal")
    assert found == breed
