"""Impulse: a rigid-body physics engine for robotics (Featherstone dynamics, exact Coulomb contact).

Quick start::

    import impulse
    world = impulse.World.from_file("models/worlds/anymal_stand.xml")
    robot = world.system("anymal")
    world.integrate(1000)            # 1 s at 1 ms, GIL released
    print(robot.q[:3], world.stats().contacts)

State arrays (``robot.q``, ``robot.u``, ...) are read-only numpy views of the engine's memory;
write them with the ``set_*`` methods, which validate like the C++ API and raise
:class:`impulse.InvalidArgument` (a ``ValueError``) with the engine's message.

State: ``world.save_state()`` returns a :class:`impulse.WorldState` (``to_bytes``/``from_bytes``,
``save``/``load``, pickle); ``world.restore_state(state)``, ``world.reset()`` and ``world.clone()``
replay a trajectory bit for bit. ``world.integrate()`` returns a :class:`impulse.StepReport`;
``world.warnings()`` counts the conditions of all steps.

Terrain and sensors: :class:`impulse.Heightfield` (``world.add_heightfield``), :class:`impulse.Imu`,
:class:`impulse.JointSensor`, :class:`impulse.ContactSensor`, :class:`impulse.ForceTorqueSensor`,
:class:`impulse.HeightScan`: call ``update()`` after each step, read the views.

Recordings for `impulse view` and `impulse plot`: :class:`impulse.Recorder` (``record(world)`` per frame).

Batched simulation: :class:`impulse.VecWorld` (N copies of a world on a C++ thread pool) and
:mod:`impulse.envs` (vectorized environments in Gymnasium's conventions).
"""
from ._impulse import (  # noqa: F401
    __version__,
    ArticulatedSystem,
    BisectionSettings,
    BodyContactImpulse,
    Contact,
    ContactReport,
    ContactSensor,
    ConcurrentUseError,
    ContactSettings,
    Error,
    ForceTorqueSensor,
    HeightScan,
    Heightfield,
    Imu,
    InvalidArgument,
    IslandResult,
    JointSensor,
    LmSettings,
    LmVariant,
    LocomotionRewards,
    LocomotionSettings,
    LocomotionTask,
    Model,
    ModelError,
    NoSlipSettings,
    PgsSettings,
    PositionCorrection,
    PositionUpdate,
    Range,
    Recorder,
    RestitutionLaw,
    SensorNoise,
    SlipModel,
    SolverMethod,
    SolverResult,
    SolverSettings,
    SolverStatus,
    StageTimes,
    StateFormatError,
    StepReport,
    StepSettings,
    StepStats,
    StepStatus,
    TransitionDifferentiator,
    VecWorld,
    WarningCounter,
    WarningKind,
    World,
    WorldFileError,
    WorldState,
    contact_solver_names,
    kernel_isa,
    kernel_isa_supported,
    set_kernel_isa,
    settings_fields,
    load_locomotion_config,
    load_urdf,
    load_world,
    locomotion_config_keys,
    parse_locomotion_config,
    solver_registry,
)
from ._impulse import (  # noqa: F401  (model-level algorithms, bind_algorithms.cpp)
    Data,
    aba,
    aba_derivatives,
    center_of_mass,
    center_of_mass_jacobian,
    center_of_mass_velocity_derivatives,
    crba,
    forward_kinematics,
    frame_acceleration_derivatives,
    frame_jacobian,
    frame_jacobian_time_variation,
    frame_placement,
    frame_placements,
    frame_velocity_derivatives,
    kinetic_energy,
    kinetic_energy_derivatives,
    nonlinear_effects,
    potential_energy,
    potential_energy_derivatives,
    rnea,
    rnea_derivatives,
)
from . import _impulse as _compiled  # noqa: E402
from . import _pickling  # noqa: E402

_pickling.install(_compiled)

from . import envs  # noqa: F401,E402

import os as _os

#: Directory of the robot descriptions shipped with the package (ANYmal).
DATA_DIR = _os.path.join(_os.path.dirname(__file__), "data")
