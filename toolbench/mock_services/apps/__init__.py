"""AppBench's apps (issue 13, being built): the API registry, the plan parser and the paper scorer.

``registry`` lists the 15 apps and 33 APIs with their arguments and returned values; ``plan`` reads
plans in AppBench's line format (never as code) and ties references to the calls that return
them; ``paper`` is AppBench's own scorer, reproduced with its bugs. The app back-ends, our scorer
and the env come next.
"""
