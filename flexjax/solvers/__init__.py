from .base import AbstractDAESolver as AbstractDAESolver
from .dae import simulate as simulate
from .generalized_alpha import GAState as GAState, GeneralizedAlpha as GeneralizedAlpha, StepInfo as StepInfo
from .ode import Baumgarte as Baumgarte, UdwadiaKalaba as UdwadiaKalaba
from .smooth import simulate_ode as simulate_ode
from .rk4 import RK4 as RK4
from .statics import StaticSolution as StaticSolution, solve_static as solve_static
