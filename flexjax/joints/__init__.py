from .ancf import AncfClamp as AncfClamp, AncfPin as AncfPin, AncfRevolute as AncfRevolute
from .ancf3d import (
    AncfClamp3D as AncfClamp3D,
    AncfRevolute3D as AncfRevolute3D,
    AncfRigidConnection3D as AncfRigidConnection3D,
    AncfSpherical3D as AncfSpherical3D,
)
from .base import AbstractJoint as AbstractJoint, AbstractVelocityConstraint as AbstractVelocityConstraint
from .driving import (
    AngleDriver as AngleDriver,
    DrivingConstraint as DrivingConstraint,
    coordinate_driver as coordinate_driver,
)
from .fixed import FixedJoint as FixedJoint
from .nonholonomic import NoSlipConstraint as NoSlipConstraint, VelocityDriver as VelocityDriver
from .revolute import (
    RevoluteJoint as RevoluteJoint,
    RevoluteJoint3D as RevoluteJoint3D,
    SphericalJoint as SphericalJoint,
)
