from .classic import (
    double_pendulum as double_pendulum,
)
from .classic import (
    double_pendulum_state as double_pendulum_state,
)
from .classic import (
    pendulum as pendulum,
)
from .classic import (
    pendulum_period as pendulum_period,
)
from .classic import (
    pendulum_state as pendulum_state,
)
from .classic import (
    slider_crank as slider_crank,
)
from .classic import (
    slider_crank_state as slider_crank_state,
)
from .classic import (
    slider_position_exact as slider_position_exact,
)
from .clearance_arm import (
    CirclePath as CirclePath,
)
from .clearance_arm import (
    clearance_arm as clearance_arm,
)
from .clearance_arm import (
    clearance_arm_state as clearance_arm_state,
)
from .clearance_arm import (
    inverse_kinematics as inverse_kinematics,
)
from .clearance_arm import (
    simulate_arm as simulate_arm,
)
from .impact_beam import (
    impact_beam as impact_beam,
)
from .impact_beam import (
    impact_beam_ancf as impact_beam_ancf,
)
from .impact_beam import (
    impact_beam_ancf_state as impact_beam_ancf_state,
)
from .impact_beam import (
    impact_beam_state as impact_beam_state,
)
from .mobile_robot import (
    EllipsePath as EllipsePath,
)
from .mobile_robot import (
    mobile_robot as mobile_robot,
)
from .mobile_robot import (
    mobile_robot_state as mobile_robot_state,
)
from .mobile_robot import (
    path_error as path_error,
)
