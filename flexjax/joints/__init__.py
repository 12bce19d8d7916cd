from .ancf import AncfClamp as AncfClamp
from .ancf import AncfPin as AncfPin
from .ancf import AncfRevolute as AncfRevolute
from .ancf3d import (
    AncfClamp3D as AncfClamp3D,
)
from .ancf3d import (
    AncfRevolute3D as AncfRevolute3D,
)
from .ancf3d import (
    AncfRigidConnection3D as AncfRigidConnection3D,
)
from .ancf3d import (
    AncfSpherical3D as AncfSpherical3D,
)
from .base import AbstractJoint as AbstractJoint
from .base import AbstractVelocityConstraint as AbstractVelocityConstraint
from .driving import (
    AngleDriver as AngleDriver,
)
from .driving import (
    DrivingConstraint as DrivingConstraint,
)
from .driving import (
    coordinate_driver as coordinate_driver,
)
from .fixed import FixedJoint as FixedJoint
from .nonholonomic import NoSlipConstraint as NoSlipConstraint
from .nonholonomic import VelocityDriver as VelocityDriver
from .revolute import (
    RevoluteJoint as RevoluteJoint,
)
from .revolute import (
    RevoluteJoint3D as RevoluteJoint3D,
)
from .revolute import (
    SphericalJoint as SphericalJoint,
)
