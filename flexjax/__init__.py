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

from .bodies import (  # noqa: E402
    AbstractBody as AbstractBody,
    ModalHubBeam as ModalHubBeam,
    SpongArm as SpongArm,
    PointMass as PointMass,
    RigidBar2D as RigidBar2D,
    RigidBar3D as RigidBar3D,
    RigidBody2D as RigidBody2D,
    RigidBody3D as RigidBody3D,
    TriangularPlate as TriangularPlate,
)
from .control.references import ConstantRate as ConstantRate, Polynomial as Polynomial, Sinusoid as Sinusoid  # noqa: E402
from .forces import (  # noqa: E402
    AbstractForce as AbstractForce,
    AppliedTorque as AppliedTorque,
    Gravity as Gravity,
    PointForce as PointForce,
    SpringDamper as SpringDamper,
)
from .joints import (  # noqa: E402
    AbstractJoint as AbstractJoint,
    AngleDriver as AngleDriver,
    DrivingConstraint as DrivingConstraint,
    NoSlipConstraint as NoSlipConstraint,
    VelocityDriver as VelocityDriver,
    AbstractVelocityConstraint as AbstractVelocityConstraint,
    FixedJoint as FixedJoint,
    RevoluteJoint as RevoluteJoint,
    RevoluteJoint3D as RevoluteJoint3D,
    SphericalJoint as SphericalJoint,
    coordinate_driver as coordinate_driver,
)
from .solvers import (  # noqa: E402
    Baumgarte as Baumgarte,
    GeneralizedAlpha as GeneralizedAlpha,
    RK4 as RK4,
    UdwadiaKalaba as UdwadiaKalaba,
    simulate as simulate,
    simulate_ode as simulate_ode,
)
from ._checks import ConsistencyWarning as ConsistencyWarning  # noqa: E402
from .system import InconsistentInitialConditions as InconsistentInitialConditions, System as System  # noqa: E402
from .trajectory import SolverError as SolverError, Trajectory as Trajectory  # noqa: E402

from .bodies import AncfBeam2D as AncfBeam2D, straight_beam_coordinates as straight_beam_coordinates  # noqa: E402
from .forces import AncfNodeTorque as AncfNodeTorque, DistributedLoad as DistributedLoad  # noqa: E402
from .forces import AppliedMoment3D as AppliedMoment3D, DistributedLoad3D as DistributedLoad3D  # noqa: E402
from .joints import AncfClamp as AncfClamp, AncfPin as AncfPin, AncfRevolute as AncfRevolute  # noqa: E402
from .solvers import StaticSolution as StaticSolution, solve_static as solve_static  # noqa: E402

from .batch import BatchInfo as BatchInfo, run_batch as run_batch  # noqa: E402

from .control.pid import PIDJointTorque as PIDJointTorque  # noqa: E402
from .forces import AbstractStatefulForce as AbstractStatefulForce  # noqa: E402
from .forces import ClearanceJoint as ClearanceJoint, effective_modulus as effective_modulus  # noqa: E402

__version__ = "0.1.0"

from .bodies import (  # noqa: E402
    AncfBeam3D as AncfBeam3D,
    CircularSection as CircularSection,
    RectangularSection as RectangularSection,
    straight_beam_coordinates_3d as straight_beam_coordinates_3d,
)
from .joints import (  # noqa: E402
    AncfClamp3D as AncfClamp3D,
    AncfRevolute3D as AncfRevolute3D,
    AncfRigidConnection3D as AncfRigidConnection3D,
    AncfSpherical3D as AncfSpherical3D,
)
from .contact import PointSurfaceContact as PointSurfaceContact, first_contact as first_contact, simulate_contact as simulate_contact  # noqa: E402

from .control import (  # noqa: E402
    PD as PD,
    CoordinateControl as CoordinateControl,
    Cycloidal as Cycloidal,
    Ramp as Ramp,
    RestToRest as RestToRest,
    Shaper as Shaper,
    SmoothStart as SmoothStart,
    Trapezoidal as Trapezoidal,
    multimode_zvd as multimode_zvd,
    residual_vibration as residual_vibration,
    zvd as zvd,
)

from .analysis.modal import Modes as Modes, modes as modes  # noqa: E402

from .outputs import (  # noqa: E402
    BeamDeflection as BeamDeflection,
    BodyPoint as BodyPoint,
    JointReaction as JointReaction,
    joint_reaction as joint_reaction,
)

from .outputs import Outputs as Outputs  # noqa: E402
