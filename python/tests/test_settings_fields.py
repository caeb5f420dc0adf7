"""The settings classes are generated from the C++ field tables (impulse.settings_fields()): every
field reads back what was set, a value out of its range raises InvalidArgument with the message
the world file gives for the same value, and a value of the wrong type raises TypeError."""
import pytest

import impulse

ELEMENT = {
    "BisectionSettings": '<solver name="bisection" {}/>',
    "PgsSettings": '<solver name="pgs" {}/>',
    "LmSettings": '<solver name="lm" {}/>',
    "NoSlipSettings": '<solver name="noslip" {}/>',
    "ContactSettings": "<contact {}/>",
}


def in_range(f, x):
    if f["lo"] is not None and not (x >= f["lo"] if f["lo_closed"] else x > f["lo"]):
        return False
    if f["hi"] is not None and not (x <= f["hi"] if f["hi_closed"] else x < f["hi"]):
        return False
    return True


def other_value(f, default):
    if f["type"] == "bool":
        return not default
    if f["type"] in ("float", "int"):
        step = 1 if f["type"] == "int" else 0
        for x in ([default + 1, default - 1] if step else [default * 1.5, default * 0.5, default + 0.25]):
            if x != default and in_range(f, x):
                return x
        raise AssertionError(f"no other value in range for {f['name']}")
    members = getattr(impulse, f["type"]).__members__.values()
    return next(m for m in members if m != default)


def out_of_range(f):
    bad = []
    if f["lo"] is not None:
        bad.append(f["lo"] - 1 if f["lo_closed"] else f["lo"])
    if f["hi"] is not None:
        bad.append(f["hi"] + 1 if f["hi_closed"] else f["hi"])
    return [int(x) if f["type"] == "int" else float(x) for x in bad]


def world_file_error(tmp_path, cls, attribute, value):
    path = tmp_path / "bad.xml"
    path.write_text("<world>\n" + ELEMENT[cls].format(f'{attribute}="{value}"') + "\n</world>\n")
    with pytest.raises(impulse.WorldFileError) as e:
        impulse.load_world(str(path))
    return str(e.value)


@pytest.mark.parametrize("cls", sorted(ELEMENT))
def test_settings_fields_set_get_and_ranges(cls, tmp_path):
    tables = impulse.settings_fields()
    assert sorted(tables) == sorted(ELEMENT)
    fields = tables[cls]
    settings_type = getattr(impulse, cls)
    # the class has exactly the table's fields, in its repr too
    props = {n for n, p in vars(settings_type).items() if isinstance(p, property)}
    assert props == {f["name"] for f in fields}
    assert repr(settings_type()).startswith(cls + "(" + fields[0]["name"] + "=")
    for f in fields:
        s = settings_type()
        default = getattr(s, f["name"])
        value = other_value(f, default)
        setattr(s, f["name"], value)
        assert getattr(s, f["name"]) == value and type(getattr(s, f["name"])) is type(value)
        for bad in out_of_range(f):
            with pytest.raises(impulse.InvalidArgument) as e:
                setattr(s, f["name"], bad)
            assert " must be " in str(e.value) and f["name"] in str(e.value)
            assert getattr(s, f["name"]) == value  # unchanged
            assert str(e.value) in world_file_error(tmp_path, cls, f["attribute"], bad)
        with pytest.raises(TypeError, match=f"{cls}.{f['name']}: expected"):
            setattr(s, f["name"], "x")


def test_settings_fields_applied_and_read_back():
    w = impulse.World()
    b = impulse.BisectionSettings()
    b.slip_model = impulse.SlipModel.MinimumEnergy
    b.illinois = False
    b.stall_window = 0  # 0: never stop on a plateau
    w.set_contact_solver(b)
    back = w.solver_settings.bisection
    assert back.slip_model == impulse.SlipModel.MinimumEnergy and not back.illinois and back.stall_window == 0
    with pytest.raises(impulse.InvalidArgument, match=r"solver 'pgs': stall_window must be in \[0, 1e8\], got -1"):
        impulse.PgsSettings().stall_window = -1
    c = impulse.ContactSettings()
    c.restitution_law = impulse.RestitutionLaw.Newton
    w.set_contact_settings(c)
    assert w.contact_settings.restitution_law == impulse.RestitutionLaw.Newton


def test_settings_fields_world_file_takes_what_python_takes(tmp_path):
    path = tmp_path / "w.xml"
    path.write_text('<world>\n<solver name="bisection" slip_model="minimum_energy" illinois="false" '
                    'stall_window="0"/>\n</world>\n')
    b = impulse.load_world(str(path)).solver_settings.bisection
    assert b.slip_model == impulse.SlipModel.MinimumEnergy and not b.illinois and b.stall_window == 0
