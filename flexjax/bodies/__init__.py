from .ancf2d import AncfBeam2D as AncfBeam2D, straight_beam_coordinates as straight_beam_coordinates
from .ancf3d import (
    AncfBeam3D as AncfBeam3D,
    straight_beam_coordinates_3d as straight_beam_coordinates_3d,
)
from .base import AbstractBody as AbstractBody, ElementChain as ElementChain, planar_angle as planar_angle
from .modal_beam import (
    HubBeamConstants as HubBeamConstants,
    HubBeamTables as HubBeamTables,
    ModalHubBeam as ModalHubBeam,
)
from .rigid import (
    AbstractNaturalBody as AbstractNaturalBody,
    PointMass as PointMass,
    RigidBar2D as RigidBar2D,
    RigidBar3D as RigidBar3D,
    RigidBody2D as RigidBody2D,
    RigidBody3D as RigidBody3D,
    TriangularPlate as TriangularPlate,
)
from .sections import CircularSection as CircularSection, RectangularSection as RectangularSection
from .spong_arm import SpongArm as SpongArm
