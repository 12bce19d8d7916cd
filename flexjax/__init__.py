"""flexjax: differentiable simulation of flexible multibody systems in JAX.

Importing flexjax enables 64-bit floats (`jax_enable_x64`): stiff flexible bodies
(E ~ 100 GPa) with small steps give wrong answers in float32. It also turns on JAX's
persistent compilation cache in a per-user folder (`flexjax._cache`; `FLEXJAX_NO_CACHE=1`
turns it off), so a model compiled once loads in later processes, and keeps the BLAS
under XLA's CPU LAPACK kernels single-threaded unless `OPENBLAS_NUM_THREADS` or
`OMP_NUM_THREADS` is set (`flexjax._blas`: its threads slow small solves many times over).
"""

import jax

jax.config.update("jax_enable_x64", True)

from ._blas import single_threaded_blas  # noqa: E402
from ._cache import enable_persistent_cache  # noqa: E402

single_threaded_blas()

enable_persistent_cache()

from ._checks import ConsistencyWarning as ConsistencyWarning  # noqa: E402
from .batch import BatchInfo as BatchInfo  # noqa: E402
from .batch import run_batch as run_batch
from .bodies import (  # noqa: E402
    AbstractBody as AbstractBody,
)
from .bodies import AncfBeam2D as AncfBeam2D  # noqa: E402
from .bodies import (
    ModalHubBeam as ModalHubBeam,
)
from .bodies import (
    PointMass as PointMass,
)
from .bodies import (
    RigidBar2D as RigidBar2D,
)
from .bodies import (
    RigidBar3D as RigidBar3D,
)
from .bodies import (
    RigidBody2D as RigidBody2D,
)
from .bodies import (
    RigidBody3D as RigidBody3D,
)
from .bodies import (
    SpongArm as SpongArm,
)
from .bodies import (
    TriangularPlate as TriangularPlate,
)
from .bodies import straight_beam_coordinates as straight_beam_coordinates
from .control.pid import PIDJointTorque as PIDJointTorque  # noqa: E402
from .control.references import ConstantRate as ConstantRate  # noqa: E402
from .control.references import Polynomial as Polynomial
from .control.references import Sinusoid as Sinusoid
from .forces import (  # noqa: E402
    AbstractForce as AbstractForce,
)
from .forces import AbstractStatefulForce as AbstractStatefulForce  # noqa: E402
from .forces import AncfNodeTorque as AncfNodeTorque  # noqa: E402
from .forces import AppliedMoment3D as AppliedMoment3D  # noqa: E402
from .forces import (
    AppliedTorque as AppliedTorque,
)
from .forces import ClearanceJoint as ClearanceJoint  # noqa: E402
from .forces import DistributedLoad as DistributedLoad
from .forces import DistributedLoad3D as DistributedLoad3D
from .forces import (
    Gravity as Gravity,
)
from .forces import (
    PointForce as PointForce,
)
from .forces import (
    SpringDamper as SpringDamper,
)
from .forces import effective_modulus as effective_modulus
from .joints import (  # noqa: E402
    AbstractJoint as AbstractJoint,
)
from .joints import (
    AbstractVelocityConstraint as AbstractVelocityConstraint,
)
from .joints import AncfClamp as AncfClamp  # noqa: E402
from .joints import AncfPin as AncfPin
from .joints import AncfRevolute as AncfRevolute
from .joints import (
    AngleDriver as AngleDriver,
)
from .joints import (
    DrivingConstraint as DrivingConstraint,
)
from .joints import (
    FixedJoint as FixedJoint,
)
from .joints import (
    NoSlipConstraint as NoSlipConstraint,
)
from .joints import (
    RevoluteJoint as RevoluteJoint,
)
from .joints import (
    RevoluteJoint3D as RevoluteJoint3D,
)
from .joints import (
    SphericalJoint as SphericalJoint,
)
from .joints import (
    VelocityDriver as VelocityDriver,
)
from .joints import (
    coordinate_driver as coordinate_driver,
)
from .solvers import (
    RK4 as RK4,
)
from .solvers import (  # noqa: E402
    Baumgarte as Baumgarte,
)
from .solvers import (
    GeneralizedAlpha as GeneralizedAlpha,
)
from .solvers import StaticSolution as StaticSolution  # noqa: E402
from .solvers import (
    UdwadiaKalaba as UdwadiaKalaba,
)
from .solvers import (
    simulate as simulate,
)
from .solvers import (
    simulate_ode as simulate_ode,
)
from .solvers import solve_static as solve_static
from .system import InconsistentInitialConditions as InconsistentInitialConditions  # noqa: E402
from .system import System as System
from .trajectory import SolverError as SolverError  # noqa: E402
from .trajectory import Trajectory as Trajectory

__version__ = "0.1.0"

from .analysis.modal import Modes as Modes  # noqa: E402
from .analysis.modal import modes as modes
from .bodies import (  # noqa: E402
    AncfBeam3D as AncfBeam3D,
)
from .bodies import (
    CircularSection as CircularSection,
)
from .bodies import (
    RectangularSection as RectangularSection,
)
from .bodies import (
    straight_beam_coordinates_3d as straight_beam_coordinates_3d,
)
from .contact import (
    PointSurfaceContact as PointSurfaceContact,
)  # noqa: E402
from .contact import (
    first_contact as first_contact,
)
from .contact import (
    simulate_contact as simulate_contact,
)
from .control import (  # noqa: E402
    PD as PD,
)
from .control import (
    CoordinateControl as CoordinateControl,
)
from .control import (
    Cycloidal as Cycloidal,
)
from .control import (
    Ramp as Ramp,
)
from .control import (
    RestToRest as RestToRest,
)
from .control import (
    Shaper as Shaper,
)
from .control import (
    SmoothStart as SmoothStart,
)
from .control import (
    Trapezoidal as Trapezoidal,
)
from .control import (
    multimode_zvd as multimode_zvd,
)
from .control import (
    residual_vibration as residual_vibration,
)
from .control import (
    zvd as zvd,
)
from .joints import (  # noqa: E402
    AncfClamp3D as AncfClamp3D,
)
from .joints import (
    AncfRevolute3D as AncfRevolute3D,
)
from .joints import (
    AncfRigidConnection3D as AncfRigidConnection3D,
)
from .joints import (
    AncfSpherical3D as AncfSpherical3D,
)
from .outputs import (  # noqa: E402
    BeamDeflection as BeamDeflection,
)
from .outputs import (
    BodyPoint as BodyPoint,
)
from .outputs import (
    JointReaction as JointReaction,
)
from .outputs import Outputs as Outputs  # noqa: E402
from .outputs import (
    joint_reaction as joint_reaction,
)
