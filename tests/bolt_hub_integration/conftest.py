"""The Home Assistant integration (custom_components/bolt_hub). Its own tests, in phacc/, need
Home Assistant itself (Python 3.13): this suite (Python 3.11) does not collect them, and
test_phacc_suite.py runs them in .cache/phacc-venv."""

collect_ignore = ["phacc"]
