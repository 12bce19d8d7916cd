r"""The paper systems and classic mechanisms as builder functions.

Each model module builds `System`s (and consistent initial states) from the library's
parts and holds the model's constants; the experiments (`flexjax run NAME`) only run
these models and report.

- `classic`: `pendulum`, `double_pendulum`, `slider_crank` with closed-form references.
- `mobile_robot`: seed 003's differential-drive robot (Udwadia-Kalaba, nonholonomic).
- `clearance_arm`: seed 002's two-link ANCF arm with a clearance elbow under PID.
- `impact_beam`: seed 004's beam hitting an inclined surface (modal and ANCF).
- `parallel_robot`: seed 001's 3-RRPaR robot with flexible ANCF rods.
- `flexible_slider_crank`: a slider-crank with an ANCF connecting rod.
- `flfj_arm`: seed 000's flexible-link flexible-joint arm, its PD + ZVD control and tuning.
- `spinup_beam`: the Simo & Vu-Quoc spin-up of a hub-clamped cantilever.
- `flexible_pendulum`: the very flexible ANCF pendulum of Berzeri & Shabana.
- `elastica`: the ANCF cantilever under a tip load and the exact elastica.
- `ancf3d_bend`: the 45° bend of Bathe & Bolourchi with spatial ANCF beams.
- `ancf3d_cantilever`: a clamped spatial ANCF beam under tip and distributed loads.
- `spinning_rod`: a spatial ANCF rod on a spherical joint, spinning under gravity.
"""

from .ancf3d_bend import (
    UnwarpedSquare as UnwarpedSquare,
    ancf3d_bend as ancf3d_bend,
    ancf3d_bend_tips as ancf3d_bend_tips,
)
from .ancf3d_cantilever import (
    ancf3d_cantilever as ancf3d_cantilever,
)
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
from .clearance_arm import (
    TipCirclePath as TipCirclePath,
    clearance_arm as clearance_arm,
    clearance_arm_state as clearance_arm_state,
    inverse_kinematics as inverse_kinematics,
    simulate_arm as simulate_arm,
)
from .elastica import (
    elastica_reference as elastica_reference,
    solve_elastica as solve_elastica,
)
from .flexible_pendulum import (
    flexible_pendulum as flexible_pendulum,
    simulate_flexible_pendulum as simulate_flexible_pendulum,
)
from .flexible_slider_crank import (
    flexible_slider_crank as flexible_slider_crank,
    flexible_slider_crank_state as flexible_slider_crank_state,
)
from .flfj_arm import (
    flfj_arm as flfj_arm,
    flfj_cantilever_frequencies as flfj_cantilever_frequencies,
    flfj_fe_mode_shapes as flfj_fe_mode_shapes,
    flfj_tuning_objective as flfj_tuning_objective,
    shaper_from_half_periods as shaper_from_half_periods,
    simulate_flfj_arm as simulate_flfj_arm,
)
from .impact_beam import (
    impact_beam as impact_beam,
    impact_beam_ancf as impact_beam_ancf,
    impact_beam_ancf_state as impact_beam_ancf_state,
    impact_beam_state as impact_beam_state,
)
from .mobile_robot import (
    EllipsePath as EllipsePath,
    mobile_robot as mobile_robot,
    mobile_robot_state as mobile_robot_state,
    path_error as path_error,
)
from .parallel_robot import (
    PlatformCirclePath as PlatformCirclePath,
    parallel_robot as parallel_robot,
    simulate_parallel_robot as simulate_parallel_robot,
)
from .spinning_rod import (
    spinning_rod as spinning_rod,
    spinning_rod_state as spinning_rod_state,
)
from .spinup_beam import (
    SpinUpAngle as SpinUpAngle,
    simulate_spinup as simulate_spinup,
    spinup_beam as spinup_beam,
    spinup_hub_angle as spinup_hub_angle,
)
