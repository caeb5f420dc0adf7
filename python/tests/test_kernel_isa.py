"""impulse.kernel_isa / set_kernel_isa: the step's kernels for the x86-64 baseline (the default)
or x86-64-v3 (AVX2 + FMA): the same physics to round-off, each deterministic."""
import numpy as np
import pytest

import impulse


def test_the_baseline_is_the_default_and_bad_names_are_refused():
    assert impulse.kernel_isa() == "baseline"
    assert impulse.kernel_isa_supported("baseline")
    with pytest.raises(ValueError, match="'avx512' is not an instruction set"):
        impulse.set_kernel_isa("avx512")
    assert impulse.kernel_isa() == "baseline"


def _stand(stand_file, isa, steps=300):
    world = impulse.load_world(stand_file)
    before = impulse.kernel_isa()
    impulse.set_kernel_isa(isa)
    try:
        world.integrate(steps)
    finally:
        impulse.set_kernel_isa(before)
    return np.array(world.system(0).q)


def test_x86_64_v3_kernels_follow_the_baseline(stand_file):
    if not impulse.kernel_isa_supported("x86-64-v3"):
        with pytest.raises(ValueError, match="does not run x86-64-v3"):
            impulse.set_kernel_isa("x86-64-v3")
        pytest.skip("this CPU does not run x86-64-v3")
    base = _stand(stand_file, "baseline")
    v3 = _stand(stand_file, "x86-64-v3")
    again = _stand(stand_file, "x86-64-v3")
    assert np.array_equal(v3, again)  # deterministic
    assert not np.array_equal(v3, base)  # the other copy ran (fused multiply-adds round once)
    assert np.max(np.abs(v3 - base)) < 1e-9  # the same standing robot
    assert impulse.kernel_isa() == "baseline"
