from .ancf import AncfNodeTorque as AncfNodeTorque, DistributedLoad as DistributedLoad
from .applied import AppliedTorque as AppliedTorque, PointForce as PointForce
from .base import AbstractForce as AbstractForce, AbstractStatefulForce as AbstractStatefulForce
from .clearance import ClearanceJoint as ClearanceJoint, effective_modulus as effective_modulus
from .gravity import Gravity as Gravity
from .loads3d import AppliedMoment3D as AppliedMoment3D, DistributedLoad3D as DistributedLoad3D
from .spring_damper import SpringDamper as SpringDamper
