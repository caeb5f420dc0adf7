"""impulse.kernel_isa / set_kernel_isa: the step's kernels for the x86-64 baseline or x86-64-v3
(AVX2, BMI2, VEX encodings), the CPU's choice by default: both give the same bits."""
import numpy as np
import pytest

import impulse


def _default():
    return "x86-64-v3" if impulse.kernel_isa_supported("x86-64-v3") else "baseline"


def test_the_cpu_chooses_the_default_and_bad_names_are_refused():
    assert impulse.kernel_isa() == _default()
    assert impulse.kernel_isa_supported("baseline")
    with pytest.raises(ValueError, match="'avx512' is not an instruction set"):
        impulse.set_kernel_isa("avx512")
    assert impulse.kernel_isa() == _default()


def _stand(stand_file, isa, steps=300):
    world = impulse.load_world(stand_file)
    before = impulse.kernel_isa()
    impulse.set_kernel_isa(isa)
    try:
        world.integrate(steps)
    finally:
        impulse.set_kernel_isa(before)
    return np.array(world.system(0).q)


def test_x86_64_v3_kernels_give_the_baselines_bits(stand_file):
    if not impulse.kernel_isa_supported("x86-64-v3"):
        with pytest.raises(ValueError, match="does not run x86-64-v3"):
            impulse.set_kernel_isa("x86-64-v3")
        pytest.skip("this CPU does not run x86-64-v3")
    base = _stand(stand_file, "baseline")
    v3 = _stand(stand_file, "x86-64-v3")
    assert np.array_equal(v3, base)  # no fused multiply-adds: the same rounding in both copies
    assert impulse.kernel_isa() == _default()
