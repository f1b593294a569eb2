"""Worksheets beyond the six of the test set: ones only ``train`` uses, and ones held out for ``unseen``.

Each table has a first column that names its rows (unique text), a text column whose values
repeat (a grouping), and numeric columns. The data are invented for this project.
"""

from __future__ import annotations

from typing import Any

TRAIN_BOOKS: dict[str, list[list[Any]]] = {
    "Books": [
        ["Title", "Genre", "Pages", "Price", "Copies"],
        ["Ashfall", "Fantasy", 412, 18.5, 7],
        ["Blue Harbor", "Mystery", 288, 12.99, 15],
        ["Cinder Road", "Fantasy", 530, 21.0, 4],
        ["Dune Sea", "Travel", 196, 9.75, 22],
        ["Echo Park", "Mystery", 344, 14.25, 11],
        ["Field Notes", "Travel", 152, 8.5, 30],
        ["Glass Tower", "Thriller", 376, 16.0, 9],
    ],
    "Fleet": [
        ["Vehicle", "Type", "Mileage", "Year", "Seats"],
        ["Van 1", "Van", 84200, 2017, 8],
        ["Van 2", "Van", 61050, 2019, 8],
        ["Truck 1", "Truck", 132400, 2014, 3],
        ["Car 1", "Sedan", 45800, 2020, 5],
        ["Car 2", "Sedan", 23900, 2022, 5],
        ["Truck 2", "Truck", 98700, 2016, 3],
        ["Bus 1", "Bus", 210300, 2012, 40],
    ],
    "Orders": [
        ["Order", "Customer", "Items", "Total", "Shipping"],
        ["O-101", "Acme", 3, 120.5, 9.9],
        ["O-102", "Birch Co", 1, 45.0, 4.5],
        ["O-103", "Acme", 7, 310.25, 14.0],
        ["O-104", "Cobalt", 2, 80.0, 6.0],
        ["O-105", "Birch Co", 5, 199.99, 9.9],
        ["O-106", "Delta", 4, 150.0, 7.5],
        ["O-107", "Cobalt", 6, 240.4, 12.0],
        ["O-108", "Acme", 2, 66.6, 4.5],
    ],
    "Projects": [
        ["Project", "Lead", "Budget", "Hours", "Progress"],
        ["Apollo", "Rita", 50000, 420, 80],
        ["Beacon", "Sam", 32000, 310, 45],
        ["Comet", "Rita", 75000, 610, 60],
        ["Drift", "Tomas", 18000, 150, 95],
        ["Ember", "Sam", 41000, 380, 30],
        ["Falcon", "Uma", 66000, 500, 55],
    ],
    "Courses": [
        ["Course", "Faculty", "Credits", "Enrolled", "Capacity"],
        ["Algebra", "Science", 4, 86, 100],
        ["Biology", "Science", 4, 64, 70],
        ["Ceramics", "Arts", 2, 18, 20],
        ["Drama", "Arts", 3, 25, 40],
        ["Economics", "Business", 3, 92, 90],
        ["French", "Languages", 3, 41, 45],
        ["Geology", "Science", 4, 30, 50],
        ["History", "Humanities", 3, 77, 80],
    ],
    "Rainfall": [
        ["City", "Climate", "Jan", "Feb", "Mar"],
        ["Bergen", "Oceanic", 190, 152, 170],
        ["Cairo", "Desert", 5, 4, 3],
        ["Dublin", "Oceanic", 69, 50, 54],
        ["Lima", "Desert", 1, 0, 1],
        ["Mumbai", "Monsoon", 1, 0, 0],
        ["Oslo", "Continental", 54, 39, 47],
        ["Perth", "Mediterranean", 16, 12, 19],
    ],
    "Gym": [
        ["Member", "Plan", "Visits", "Fee", "Age"],
        ["Aisha", "Premium", 22, 60, 34],
        ["Bruno", "Basic", 8, 25, 41],
        ["Carmen", "Student", 15, 15, 20],
        ["Dmitri", "Premium", 28, 60, 29],
        ["Esme", "Basic", 4, 25, 55],
        ["Felix", "Student", 11, 15, 22],
        ["Greta", "Basic", 13, 25, 38],
    ],
    "Garden": [
        ["Plant", "Bed", "Height", "Water", "Yield"],
        ["Basil", "Herbs", 35, 2, 1.2],
        ["Carrot", "Roots", 25, 3, 4.5],
        ["Dill", "Herbs", 60, 2, 0.8],
        ["Leek", "Roots", 45, 3, 3.1],
        ["Mint", "Herbs", 30, 4, 1.5],
        ["Potato", "Roots", 55, 5, 9.0],
        ["Tomato", "Fruit", 120, 6, 7.2],
    ],
}

#: Worksheets only ``unseen`` tasks use: none is in a test, demo, train or alignment task.
UNSEEN_BOOKS: dict[str, list[list[Any]]] = {
    "Library": [
        ["Branch", "District", "Loans", "Staff", "Visitors"],
        ["Elm Street", "North", 1240, 6, 3100],
        ["Harbor", "East", 860, 4, 2050],
        ["Hilltop", "North", 450, 3, 990],
        ["Market", "Central", 2010, 9, 5230],
        ["Riverside", "East", 1330, 5, 2870],
        ["Station", "Central", 1675, 7, 4400],
        ["Willow", "West", 390, 2, 760],
    ],
    "Shipments": [
        ["Tracking", "Carrier", "Weight", "Cost", "Days"],
        ["TR-881", "Swift", 2.4, 18.0, 2],
        ["TR-882", "Oxcart", 12.0, 42.5, 6],
        ["TR-883", "Swift", 0.8, 9.5, 1],
        ["TR-884", "Gull Air", 5.5, 61.0, 1],
        ["TR-885", "Oxcart", 20.0, 58.0, 7],
        ["TR-886", "Gull Air", 1.2, 24.0, 1],
        ["TR-887", "Swift", 7.3, 31.0, 3],
        ["TR-888", "Oxcart", 3.9, 19.9, 5],
    ],
    "Tickets": [
        ["Ticket", "Priority", "Agent", "Minutes", "Replies"],
        ["T-1001", "High", "Quinn", 45, 3],
        ["T-1002", "Low", "Ravi", 12, 1],
        ["T-1003", "Medium", "Quinn", 30, 2],
        ["T-1004", "High", "Sofia", 95, 6],
        ["T-1005", "Low", "Sofia", 8, 1],
        ["T-1006", "Medium", "Ravi", 52, 4],
        ["T-1007", "High", "Ravi", 70, 5],
    ],
    "Cafe": [
        ["Drink", "Size", "Price", "Sold", "Calories"],
        ["Americano", "Large", 3.2, 140, 15],
        ["Cappuccino", "Medium", 3.6, 210, 120],
        ["Chai", "Large", 3.9, 85, 190],
        ["Espresso", "Small", 2.4, 175, 5],
        ["Latte", "Medium", 3.8, 260, 150],
        ["Mocha", "Large", 4.3, 120, 290],
        ["Tea", "Small", 2.0, 95, 2],
    ],
}

#: The column that names a row (0-based), as ``KEY`` in the generator.
BOOK_KEYS = {name: 0 for name in (*TRAIN_BOOKS, *UNSEEN_BOOKS)}
#: The column whose values repeat (0-based): what a pivot table or a count groups by.
GROUP_COLUMN = {name: 1 for name in (*TRAIN_BOOKS, *UNSEEN_BOOKS)}
