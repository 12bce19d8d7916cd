"""flexjax: differentiable simulation of flexible multibody systems in JAX.

Importing flexjax enables 64-bit floats (`jax_enable_x64`): stiff flexible bodies
(E ~ 100 GPa) with small steps give wrong answers in float32. It also turns on JAX's
persistent compilation cache in a per-user folder (`flexjax._cache`; `FLEXJAX_NO_CACHE=1`
turns it off), so a model compiled once loads in later processes, and keeps the BLAS
under XLA's CPU LAPACK kernels single-threaded unless `OPENBLAS_NUM_THREADS` or
`OMP_NUM_THREADS` is set (`flexjax._blas`: its threads slow small solves many times over).

The names below are the public API, by subpackage: bodies, joints, forces, the system,
solvers and results, control, contact, outputs and analyses, batches.
"""

import jax

jax.config.update("jax_enable_x64", True)  # before any submodule creates an array

from ._blas import single_threaded_blas
from ._cache import enable_persistent_cache

single_threaded_blas()
enable_persistent_cache()

from ._checks import (
    ConsistencyWarning as ConsistencyWarning,
)
from .analysis.modal import (
    Modes as Modes,
    modes as modes,
)
from .batch import (
    BatchInfo as BatchInfo,
    run_batch as run_batch,
)
from .bodies import (
    AbstractBody as AbstractBody,
    AncfBeam2D as AncfBeam2D,
    AncfBeam3D as AncfBeam3D,
    CircularSection as CircularSection,
    ModalHubBeam as ModalHubBeam,
    PointMass as PointMass,
    RectangularSection as RectangularSection,
    RigidBar2D as RigidBar2D,
    RigidBar3D as RigidBar3D,
    RigidBody2D as RigidBody2D,
    RigidBody3D as RigidBody3D,
    SpongArm as SpongArm,
    TriangularPlate as TriangularPlate,
    straight_beam_coordinates as straight_beam_coordinates,
    straight_beam_coordinates_3d as straight_beam_coordinates_3d,
)
from .contact import (
    PointSurfaceContact as PointSurfaceContact,
    first_contact as first_contact,
    simulate_contact as simulate_contact,
)
from .control import (
    PD as PD,
    Constant as Constant,
    ConstantRate as ConstantRate,
    CoordinateControl as CoordinateControl,
    Cycloidal as Cycloidal,
    PIDJointTorque as PIDJointTorque,
    Polynomial as Polynomial,
    Ramp as Ramp,
    RestToRest as RestToRest,
    Shaper as Shaper,
    Sinusoid as Sinusoid,
    SmoothStart as SmoothStart,
    Trapezoidal as Trapezoidal,
    multimode_zvd as multimode_zvd,
    residual_vibration as residual_vibration,
    zvd as zvd,
)
from .forces import (
    AbstractForce as AbstractForce,
    AbstractStatefulForce as AbstractStatefulForce,
    AncfNodeTorque as AncfNodeTorque,
    AppliedMoment3D as AppliedMoment3D,
    AppliedTorque as AppliedTorque,
    ClearanceJoint as ClearanceJoint,
    DistributedLoad as DistributedLoad,
    DistributedLoad3D as DistributedLoad3D,
    Gravity as Gravity,
    PointForce as PointForce,
    SpringDamper as SpringDamper,
    effective_modulus as effective_modulus,
)
from .joints import (
    AbstractJoint as AbstractJoint,
    AbstractVelocityConstraint as AbstractVelocityConstraint,
    AncfClamp as AncfClamp,
    AncfClamp3D as AncfClamp3D,
    AncfPin as AncfPin,
    AncfRevolute as AncfRevolute,
    AncfRevolute3D as AncfRevolute3D,
    AncfRigidConnection3D as AncfRigidConnection3D,
    AncfSpherical3D as AncfSpherical3D,
    AngleDriver as AngleDriver,
    DrivingConstraint as DrivingConstraint,
    FixedJoint as FixedJoint,
    NoSlipConstraint as NoSlipConstraint,
    RevoluteJoint as RevoluteJoint,
    RevoluteJoint3D as RevoluteJoint3D,
    SphericalJoint as SphericalJoint,
    VelocityDriver as VelocityDriver,
    coordinate_driver as coordinate_driver,
)
from .outputs import (
    BeamDeflection as BeamDeflection,
    BodyPoint as BodyPoint,
    JointReaction as JointReaction,
    Outputs as Outputs,
    joint_reaction as joint_reaction,
)
from .results import (
    RESULTS as RESULTS,
)
from .solvers import (
    RK4 as RK4,
    AbstractDAESolver as AbstractDAESolver,
    AbstractODEForm as AbstractODEForm,
    Baumgarte as Baumgarte,
    GeneralizedAlpha as GeneralizedAlpha,
    StaticSolution as StaticSolution,
    UdwadiaKalaba as UdwadiaKalaba,
    simulate as simulate,
    simulate_ode as simulate_ode,
    solve_static as solve_static,
)
from .system import (
    InconsistentInitialConditions as InconsistentInitialConditions,
    System as System,
)
from .trajectory import (
    SolverError as SolverError,
    Trajectory as Trajectory,
)

__version__ = "0.1.0"
