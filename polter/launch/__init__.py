"""What a session starts with: the app's config file (:mod:`~polter.launch.config`) and launch planning
(:mod:`~polter.launch.planning`: from the command line's choices and the config to a plan per pane).

The command line plans; the session host is handed the plan and runs it.
"""
