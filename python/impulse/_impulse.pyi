"""Type stubs of the compiled module impulse._impulse (kept by hand next to python/src/bind_*.cpp)."""
from __future__ import annotations

import enum
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

ArrayLike = npt.ArrayLike
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

__version__: str

class Error(RuntimeError): ...
class ModelError(Error): ...
class WorldFileError(Error): ...
class InvalidArgument(Error, ValueError): ...
class StateFormatError(Error): ...
class ConcurrentUseError(Error): ...

# --- model (bind_model.cpp) ---
class Model:
    name: str
    nq: int
    nv: int
    nb: int
    floating_base: bool
    body_names: List[str]
    joint_names: List[str]
    frame_names: List[str]
    parent: List[int]
    idx_q: List[int]
    idx_v: List[int]
    lower_position: FloatArray
    upper_position: FloatArray
    velocity_limit: FloatArray
    effort_limit: FloatArray
    damping: FloatArray
    friction: FloatArray
    armature: FloatArray
    mimic: List[Tuple[str, str, float, float]]  # (joint, master, multiplier, offset)
    def body_id(self, name: str) -> int: ...
    def joint_id(self, name: str) -> int: ...
    def frame_id(self, name: str) -> int: ...
    def total_mass(self) -> float: ...
    def neutral_configuration(self) -> FloatArray: ...
    def __eq__(self, other: object) -> bool: ...
    def __ne__(self, other: object) -> bool: ...

def load_urdf(path: str, fixed_base: bool = False, package_paths: Sequence[str] = ...) -> Model: ...

# --- solvers and step statistics (bind_solvers.cpp) ---
class SolverStatus(enum.Enum):
    Converged = ...
    MaxIterations = ...
    NumericalIssue = ...

class StepStatus(enum.Enum):
    Ok = ...
    SolverNotConverged = ...
    SolverFailed = ...
    NonFinite = ...
    ContactOverflow = ...

class SolverResult:
    status: SolverStatus
    iterations: int
    residual: float
    stalled: bool
    converged: bool

class StageTimes:
    dynamics: float
    collision: float
    delassus: float
    solve: float
    integrate: float
    total: float

class StepStats:
    status: StepStatus
    contacts: int
    limits: int
    contacts_dropped: int
    islands: int
    largest_island: int
    largest_island_rows: int
    islands_not_converged: int
    friction_rows: int
    mimic_rows: int
    solver: SolverResult
    times: StageTimes
    max_penetration: float
    restitution: bool
    restitution_scale: float
    position_rows: int
    position_sweeps: int
    position_exact: int
    speculative_impacts: int

# BEGIN generated: BisectionSettings (impulse settings --update)
class SlipModel(enum.Enum):
    Coulomb = ...
    MinimumEnergy = ...

class BisectionSettings:
    slip_model: SlipModel
    max_iterations: int  # [1, 1e8]
    tolerance: float  # > 0
    stall_window: int  # [0, 1e8]
    alpha: float  # (0, 2]
    gamma: float  # (0, 1]
    alpha_min: float  # (0, 2]
    anderson_memory: int  # [0, 8]
    anderson_start: int  # [0, 1e8]
    qp_start: int  # [0, 1e8]
    beta1: float  # > 0 rad
    beta2: float  # > 0
    beta3: float  # > 0
    bisection_tolerance: float  # > 0
    max_bisection_steps: int  # [1, 1e8]
    illinois: bool
    regularization: float  # >= 0
    def __init__(self) -> None: ...
# END generated: BisectionSettings

# BEGIN generated: PgsSettings (impulse settings --update)
class PgsSettings:
    max_iterations: int  # [1, 1e8]
    tolerance: float  # > 0
    alpha: float  # (0, 2]
    stall_window: int  # [0, 1e8]
    anderson_memory: int  # [0, 8]
    anderson_start: int  # [0, 1e8]
    def __init__(self) -> None: ...
# END generated: PgsSettings

# BEGIN generated: LmSettings (impulse settings --update)
class LmVariant(enum.Enum):
    Regular = ...
    Projected = ...

class LmSettings:
    variant: LmVariant
    scale: bool
    proximal: float  # [0, 1)
    max_iterations: int  # [1, 1e8]
    tolerance: float  # > 0
    roundoff: float  # >= 0
    damping: float  # > 0
    damping_step: float  # > 1
    damping_min: float  # >= 0
    damping_max: float  # > 0
    r_min: float  # [0, 1]
    r_max: float  # [0, 1]
    sticking_start: bool
    sticking_regularization: float  # >= 0
    kink_search: bool
    watchdog: int  # [0, 1e8]
    restart_sweeps: int  # [0, 1e8]
    max_restarts: int  # [0, 1e8]
    plm_damping: float  # >= 0
    armijo: float  # (0, 1)
    backtrack: float  # (0, 1)
    max_line_search: int  # [0, 1e8]
    def __init__(self) -> None: ...
# END generated: LmSettings

# BEGIN generated: NoSlipSettings (impulse settings --update)
class NoSlipSettings:
    rank_tolerance: float  # > 0
    tolerance: float  # > 0
    max_pivots: int  # [1, 1e8]
    verify_tolerance: float  # > 0 m/s
    def __init__(self) -> None: ...
# END generated: NoSlipSettings

class SolverSettings:
    """A registry solver name and the settings of every registered solver (only `name`'s are used)."""
    name: str
    bisection: BisectionSettings
    pgs: PgsSettings
    lm: LmSettings
    noslip: NoSlipSettings
    @overload
    def __init__(self) -> None: ...
    @overload
    def __init__(self, name: str) -> None: ...
    def validate(self) -> None: ...

def settings_fields() -> Dict[str, List[Dict[str, Any]]]: ...
def contact_solver_names() -> List[str]: ...
def solver_registry() -> List[Tuple[str, str]]: ...

# --- systems (bind_system.cpp) ---
class BodyContactImpulse:
    body: int
    position: FloatArray
    impulse: FloatArray
    contact: int
    touching: bool

class ArticulatedSystem:
    name: str
    model: Model
    nq: int
    nv: int
    q: FloatArray  # read-only view
    u: FloatArray  # read-only view
    generalized_force: FloatArray
    kp: FloatArray
    kd: FloatArray
    q_target: FloatArray
    u_target: FloatArray
    applied_torque: FloatArray  # read-only view: actuator torque of the last step, within the effort limit
    joint_friction_torque: FloatArray  # read-only view: joint Coulomb friction torque of the last step
    def set_q(self, q: ArrayLike) -> None: ...
    def set_u(self, u: ArrayLike) -> None: ...
    def set_state(self, q: ArrayLike, u: ArrayLike) -> None: ...
    def set_generalized_force(self, tau: ArrayLike) -> None: ...
    def set_pd_gains(self, kp: ArrayLike, kd: ArrayLike) -> None: ...
    def set_pd_targets(self, q_target: ArrayLike, u_target: ArrayLike) -> None: ...
    def set_external_force(self, body: int, force: ArrayLike, point: ArrayLike) -> None: ...
    def set_external_torque(self, body: int, torque: ArrayLike) -> None: ...
    def clear_external_forces(self) -> None: ...
    def mass_matrix(self) -> FloatArray: ...
    def nonlinear_effects(self) -> FloatArray: ...
    def body_pose(self, body: int) -> FloatArray: ...
    def frame_pose(self, frame: str) -> FloatArray: ...
    def frame_position(self, frame: str) -> FloatArray: ...
    def frame_rotation(self, frame: str) -> FloatArray: ...
    def frame_linear_velocity(self, frame: str) -> FloatArray: ...
    def frame_angular_velocity(self, frame: str) -> FloatArray: ...
    def frame_jacobian(self, frame: str) -> FloatArray: ...
    def point_jacobian(self, body: int, point_in_body: ArrayLike) -> FloatArray: ...
    def kinetic_energy(self) -> float: ...
    def potential_energy(self) -> float: ...
    def center_of_mass(self) -> FloatArray: ...
    def contact_impulses(self) -> List[BodyContactImpulse]: ...
    def set_collision_filter(self, group: int, mask: int) -> None: ...
    def set_body_collision_filter(self, body: str, group: int, mask: int) -> None: ...
    def set_self_collision(self, enabled: bool) -> None: ...

# --- world (bind_world.cpp) ---
class Contact:
    object_a: int
    body_a: int
    object_b: int
    body_b: int
    position: FloatArray
    normal: FloatArray
    depth: float
    mu: float
    restitution: float

class ContactReport:
    contact: Contact
    impulse: FloatArray

# BEGIN generated: ContactSettings (impulse settings --update)
class RestitutionLaw(enum.Enum):
    Poisson = ...
    Newton = ...

class PositionCorrection(enum.Enum):
    Velocity = ...
    Split = ...

class PositionUpdate(enum.Enum):
    Euler = ...
    Midpoint = ...
    Bodies = ...

class ContactSettings:
    restitution_law: RestitutionLaw
    position_correction: PositionCorrection
    position_update: PositionUpdate
    restitution_threshold: float  # >= 0 m/s
    erp: float  # [0, 1]
    slop: float  # >= 0 m
    max_push_velocity: float  # > 0 m/s
    limit_margin: float  # >= 0 m or rad
    joint_limits: bool
    joint_friction: bool
    mimic_joints: bool
    def __init__(self) -> None: ...
# END generated: ContactSettings

AnySolverSettings = Union[SolverSettings, BisectionSettings, PgsSettings, LmSettings, NoSlipSettings]

class StepSettings:
    dt: float
    contact: ContactSettings
    warm_start: bool
    max_contacts: int
    stage_timing: bool

class WarningKind(enum.Enum):
    ContactOverflow = ...
    SolverNotConverged = ...
    SolverFailed = ...
    NonFinite = ...
    MassMatrixNotPositiveDefinite = ...

class WarningCounter:
    count: int
    last_time: float
    last_info: int

class StepReport:
    """Everything that happened in one step; ``report == StepStatus.X`` compares ``report.status``."""
    status: StepStatus
    stepped: bool
    contact_overflow: bool
    solver_not_converged: bool
    solver_failed: bool
    non_finite: bool
    mass_matrix_not_positive_definite: bool
    system: int
    dof: int
    pivot: float
    contacts: int
    limits: int
    solver_iterations: int
    residual: float
    restitution: bool
    ok: bool
    def __eq__(self, other: object) -> bool: ...
    def __ne__(self, other: object) -> bool: ...

class WorldState:
    """The full state of a World (read-only); bit-exact replay after World.restore_state."""
    time: float
    num_objects: int
    system_names: List[str]
    def q(self, system: int = 0) -> FloatArray: ...
    def u(self, system: int = 0) -> FloatArray: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> WorldState: ...
    def save(self, path: str) -> None: ...
    @staticmethod
    def load(path: str) -> WorldState: ...
    def __copy__(self) -> WorldState: ...
    def __deepcopy__(self, memo: Dict[int, Any]) -> WorldState: ...

class World:
    time_step: float
    gravity: FloatArray
    time: float
    contact_settings: ContactSettings
    settings: StepSettings
    max_contacts: int
    stage_timing: bool
    contact_solver: str
    solver_settings: SolverSettings
    has_initial_state: bool
    last_report: StepReport
    num_systems: int
    systems: List[ArticulatedSystem]
    def __init__(self) -> None: ...
    @staticmethod
    def from_file(path: str) -> World: ...
    @staticmethod
    def from_urdf(path: str, ground: bool = True, fixed_base: bool = False, solver: str = "bisection") -> World: ...
    def save_state(self) -> WorldState: ...
    def restore_state(self, state: WorldState) -> None: ...
    def mark_initial_state(self) -> None: ...
    def reset(self) -> None: ...
    def clone(self) -> World: ...
    def __deepcopy__(self, memo: Dict[int, Any]) -> World: ...
    def set_contact_margin(self, margin: float) -> None: ...
    def set_contact_settings(self, settings: ContactSettings) -> None: ...
    def set_max_contacts(self, n: int) -> None: ...
    @overload
    def set_contact_solver(self, name: str) -> None: ...
    @overload
    def set_contact_solver(self, settings: AnySolverSettings) -> None: ...
    def set_material_pair(self, a: str, b: str, friction: float, restitution: float) -> None: ...
    def set_default_material(self, friction: float, restitution: float) -> None: ...
    def add_ground(self, height: float = 0.0, material: str = "default") -> int: ...
    def add_static_box(self, name: str, position: ArrayLike, size: ArrayLike, material: str = "default") -> int: ...
    def add_wall(self, name: str, normal: ArrayLike, offset: float, material: str = "default") -> int: ...
    def add_heightfield(self, name: str, terrain: Heightfield, material: str = "default") -> int: ...
    def add_static_mesh(self, name: str, mesh_path: str, scale: ArrayLike = ..., position: ArrayLike = ...,
                        rotation: ArrayLike = ..., material: str = "default") -> int: ...
    def add_articulated_system(self, urdf: str, name: str = "", fixed_base: bool = False,
                               self_collision: bool = False) -> ArticulatedSystem: ...
    def add_sphere(self, name: str, radius: float, mass: float, material: str = "default") -> ArticulatedSystem: ...
    def add_box(self, name: str, size: ArrayLike, mass: float, material: str = "default") -> ArticulatedSystem: ...
    @overload
    def system(self, index: int) -> ArticulatedSystem: ...
    @overload
    def system(self, name: str) -> ArticulatedSystem: ...
    def integrate(self, steps: int = 1) -> StepReport: ...
    def integrate1(self) -> None: ...
    def integrate2(self) -> StepReport: ...
    def describe(self, report: Optional[StepReport] = None) -> str: ...
    def warnings(self) -> Dict[WarningKind, WarningCounter]: ...
    def warning(self, kind: WarningKind) -> WarningCounter: ...
    def clear_warnings(self) -> None: ...
    def stats(self) -> StepStats: ...
    def contacts(self) -> List[Contact]: ...
    def contact_reports(self) -> List[ContactReport]: ...
    def object_name(self, collision_object: int) -> str: ...

def load_world(path: str) -> World: ...

# --- terrain and sensors (bind_sensors.cpp) ---
class Heightfield:
    def __init__(self, heights: ArrayLike, dx: float, dy: float, x0: Optional[float] = None,
                 y0: Optional[float] = None) -> None: ...
    @staticmethod
    def random_rough(size_x: float, size_y: float, cell: float, amplitude: float, seed: int,
                     smoothing: int = 1) -> Heightfield: ...
    @staticmethod
    def stairs(size_x: float, size_y: float, cell: float, run: float, rise: float, x_start: float = 0.0) -> Heightfield: ...
    @staticmethod
    def slope(size_x: float, size_y: float, cell: float, gradient: float, x_start: float = 0.0) -> Heightfield: ...
    @staticmethod
    def stepping_stones(size_x: float, size_y: float, cell: float, stone: float, pitch: float, depth: float,
                        jitter: float, seed: int) -> Heightfield: ...
    @staticmethod
    def from_pgm(path: str, size_x: float, size_y: float, max_height: float) -> Heightfield: ...
    nx: int
    ny: int
    dx: float
    dy: float
    x0: float
    y0: float
    min_height: float
    max_height: float
    heights: FloatArray
    def height(self, x: float, y: float) -> Optional[float]: ...

class SensorNoise:
    def __init__(self, stddev: float = 0.0, bias: float = 0.0) -> None: ...
    stddev: float
    bias: float

class Imu:
    def __init__(self, world: World, system: ArticulatedSystem, frame: str, accelerometer: SensorNoise = ...,
                 gyroscope: SensorNoise = ..., seed: int = 0) -> None: ...
    def update(self) -> None: ...
    def reset(self) -> None: ...
    linear_acceleration: FloatArray
    angular_velocity: FloatArray
    orientation: FloatArray

class JointSensor:
    def __init__(self, system: ArticulatedSystem, position: SensorNoise = ..., velocity: SensorNoise = ...,
                 torque: SensorNoise = ..., seed: int = 0) -> None: ...
    def update(self) -> None: ...
    names: List[str]
    position: FloatArray
    velocity: FloatArray
    torque: FloatArray

class ContactSensor:
    def __init__(self, world: World, system: ArticulatedSystem, body: str) -> None: ...
    def update(self) -> None: ...
    in_contact: bool
    count: int
    force: FloatArray
    normal: FloatArray

class ForceTorqueSensor:
    def __init__(self, world: World, system: ArticulatedSystem, joint: str, noise: SensorNoise = ...,
                 seed: int = 0) -> None: ...
    def update(self) -> None: ...
    def reset(self) -> None: ...
    force: FloatArray
    torque: FloatArray

class HeightScan:
    def __init__(self, world: World, system: ArticulatedSystem, frame: str, pattern: ArrayLike,
                 noise: SensorNoise = ..., seed: int = 0, ray_start: float = 1.0, max_distance: float = 10.0) -> None: ...
    @staticmethod
    def grid(length: float, width: float, spacing: float) -> FloatArray: ...
    def update(self) -> None: ...
    size: int
    heights: FloatArray
    points: FloatArray

# --- batched worlds (bind_batch.cpp) ---
class VecWorld:
    size: int
    num_threads: int
    status: List[int]
    def __init__(self, path: str, num_worlds: int, num_threads: int = 0) -> None: ...
    def __len__(self) -> int: ...
    def world(self, index: int) -> World: ...
    def integrate(self, steps: int = 1) -> None: ...
    def get_q(self, system: int, out: FloatArray) -> None: ...
    def get_u(self, system: int, out: FloatArray) -> None: ...
    def set_state(self, system: int, q: FloatArray, u: FloatArray) -> None: ...
    def set_pd_targets(self, system: int, q_target: FloatArray, u_target: FloatArray) -> None: ...
    def set_generalized_force(self, system: int, tau: FloatArray) -> None: ...

class Recorder:
    frames: int
    bytes: int
    path: str
    def __init__(self, path: str, world: World, every: int = 1) -> None: ...
    def record(self, world: World) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> Recorder: ...
    def __exit__(self, *args: Any) -> None: ...

class LocomotionSettings:
    urdf: str
    physics_dt: float
    substeps: int
    solver: str
    max_contacts: int
    friction: float
    kp: float
    kd: float
    action_scale: float
    action_clip: float
    max_episode_steps: int
    command_vx_min: float
    command_vx_max: float
    command_vy_max: float
    command_yaw_max: float
    init_joint_noise: float
    init_velocity_noise: float
    init_height: float
    min_base_height: float
    min_uprightness: float
    air_time_weight: float
    air_time_target: float
    orientation_weight: float
    base_height_weight: float
    base_height_target: float
    only_positive_rewards: bool
    def __init__(self) -> None: ...

class LocomotionTask:
    obs_size: int
    action_size: int
    privileged_size: int
    num_envs: int
    num_threads: int
    control_dt: float
    settings: LocomotionSettings
    def __init__(self, settings: LocomotionSettings, num_envs: int, num_threads: int = 0, first_env: int = 0) -> None: ...
    def reset(self, seed: int, obs: FloatArray) -> None: ...
    def step(self, actions: FloatArray, obs: FloatArray, reward: FloatArray, terminated: BoolArray,
             truncated: BoolArray, final_obs: FloatArray, episode_return: FloatArray,
             episode_length: FloatArray) -> None: ...
    def privileged(self, out: FloatArray, final_out: FloatArray) -> None: ...
    def world(self, index: int) -> World: ...
    def command(self, index: int) -> FloatArray: ...
    def bench(self, steps: int) -> float: ...
