"""Builds impulse._impulse with the project's CMake (see pyproject.toml for the metadata).

The extension is the CMake target impulse_python; the engine library is compiled with it (static,
position independent). Environment: CMAKE_BUILD_PARALLEL_LEVEL (default 2), IMPULSE_CMAKE_ARGS
(extra -D options).
"""
import glob
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        target = os.path.abspath(self.get_ext_fullpath(ext.name))
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        cmd = ["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DIMPULSE_BUILD_TESTS=OFF",
               "-DIMPULSE_BUILD_APPS=OFF", "-DIMPULSE_BUILD_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja"):
            cmd += ["-G", "Ninja"]
        cmd += shlex.split(os.environ.get("IMPULSE_CMAKE_ARGS", ""))
        subprocess.check_call(cmd)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.check_call(["cmake", "--build", build, "--target", "impulse_python", "-j", jobs])
        built = glob.glob(os.path.join(build, "python", "impulse", "_impulse*.so"))
        if not built:
            raise RuntimeError("impulse: the CMake build produced no _impulse module (is pybind11-dev installed?)")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)
        data = os.path.join(os.path.dirname(target), "data")
        os.makedirs(data, exist_ok=True)
        shutil.copyfile(os.path.join(ROOT, "models", "anymal", "anymal.urdf"), os.path.join(data, "anymal.urdf"))


setup(ext_modules=[CMakeExtension("impulse._impulse")], cmdclass={"build_ext": CMakeBuild})
