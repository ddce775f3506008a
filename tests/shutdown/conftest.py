from tests.operator.conftest import api, config_file

__all__ = ["api", "config_file"]
