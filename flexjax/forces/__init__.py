from .applied import AppliedTorque as AppliedTorque, PointForce as PointForce
from .base import AbstractForce as AbstractForce
from .gravity import Gravity as Gravity
from .spring_damper import SpringDamper as SpringDamper
from .ancf import AncfNodeTorque as AncfNodeTorque, DistributedLoad as DistributedLoad
