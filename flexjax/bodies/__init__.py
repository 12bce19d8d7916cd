from .ancf2d import AncfBeam2D as AncfBeam2D
from .ancf2d import straight_beam_coordinates as straight_beam_coordinates
from .ancf3d import (
    AncfBeam3D as AncfBeam3D,
)
from .ancf3d import (
    straight_beam_coordinates_3d as straight_beam_coordinates_3d,
)
from .base import AbstractBody as AbstractBody
from .base import ElementChain as ElementChain
from .base import planar_angle as planar_angle
from .modal_beam import (
    HubBeamConstants as HubBeamConstants,
)
from .modal_beam import (
    HubBeamTables as HubBeamTables,
)
from .modal_beam import (
    ModalHubBeam as ModalHubBeam,
)
from .rigid import (
    AbstractNaturalBody as AbstractNaturalBody,
)
from .rigid import (
    PointMass as PointMass,
)
from .rigid import (
    RigidBar2D as RigidBar2D,
)
from .rigid import (
    RigidBar3D as RigidBar3D,
)
from .rigid import (
    RigidBody2D as RigidBody2D,
)
from .rigid import (
    RigidBody3D as RigidBody3D,
)
from .rigid import (
    TriangularPlate as TriangularPlate,
)
from .sections import CircularSection as CircularSection
from .sections import RectangularSection as RectangularSection
from .spong_arm import SpongArm as SpongArm
