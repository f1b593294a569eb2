"""AppBench's 15 apps: their APIs, the world they answer from, their back-ends and the scorers.

- ``registry``: the 15 apps and 33 APIs with their arguments, defaults and returned values;
- ``model`` and ``generator``: the world's records and the code that generates them (our own,
  the same in every process); ``extend`` grows it to hold what a task set's users name;
- ``backend``: the APIs answered from the world, with an episode's bookings;
- ``plan`` and ``records``: plans in AppBench's line format (read, never run as code) and task
  records as plans that run and score;
- ``scoring``: our scorer; ``paper``: AppBench's own, reproduced with its bugs;
- ``stats``: the shape of a task set per kind.
"""
