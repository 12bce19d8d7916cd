from .classic import (
    double_pendulum as double_pendulum,
    double_pendulum_state as double_pendulum_state,
    pendulum as pendulum,
    pendulum_period as pendulum_period,
    pendulum_state as pendulum_state,
    slider_crank as slider_crank,
    slider_crank_state as slider_crank_state,
    slider_position_exact as slider_position_exact,
)
from .mobile_robot import (
    EllipsePath as EllipsePath,
    mobile_robot as mobile_robot,
    mobile_robot_state as mobile_robot_state,
    path_error as path_error,
)
from .clearance_arm import (
    CirclePath as CirclePath,
    clearance_arm as clearance_arm,
    clearance_arm_state as clearance_arm_state,
    inverse_kinematics as inverse_kinematics,
    simulate_arm as simulate_arm,
)
from .impact_beam import (
    impact_beam as impact_beam,
    impact_beam_ancf as impact_beam_ancf,
    impact_beam_ancf_state as impact_beam_ancf_state,
    impact_beam_state as impact_beam_state,
)
