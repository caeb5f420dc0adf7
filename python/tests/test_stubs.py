"""The hand-written type stubs (python/impulse/_impulse.pyi) list every public name and member of
the compiled module, so that editors complete the whole API."""
import ast
import os

import impulse
from impulse import _impulse


def stub_tree():
    path = os.path.join(os.path.dirname(impulse.__file__), "_impulse.pyi")
    with open(path) as f:
        return ast.parse(f.read())


def test_every_public_name_and_member_is_in_the_stubs():
    tree = stub_tree()
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            top.add(node.name)
            names = set()
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
                elif isinstance(item, ast.Assign):
                    names.update(t.id for t in item.targets if isinstance(t, ast.Name))
            members[node.name] = names
        elif isinstance(node, ast.FunctionDef):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
    public = {n for n in dir(_impulse) if not n.startswith("_")} | {"__version__"}
    assert public - top == set(), "names missing from _impulse.pyi"
    missing = {}
    for name in sorted(public & set(members)):
        obj = getattr(_impulse, name)
        if not isinstance(obj, type) or issubclass(obj, BaseException):
            continue
        if hasattr(obj, "__members__"):  # pybind11 enums: their values
            runtime = set(obj.__members__)
        else:
            runtime = {m for m in vars(obj) if not m.startswith("_")}
        absent = runtime - members[name]
        if absent:
            missing[name] = sorted(absent)
    assert missing == {}, "members missing from _impulse.pyi"
