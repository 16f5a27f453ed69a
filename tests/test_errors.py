from polter.errors import ConfigError, PolterError, RoleError


def test_config_error_names_file_line_and_field() -> None:
    assert str(ConfigError("bad", path="a.toml", line=2, field="x")) == "a.toml:2: x: bad"
    assert str(ConfigError("bad", path="a.toml")) == "a.toml: bad"
    assert str(ConfigError("bad")) == "bad"


def test_role_error_is_a_config_error_and_a_polter_error() -> None:
    assert issubclass(RoleError, ConfigError) and issubclass(RoleError, PolterError)
