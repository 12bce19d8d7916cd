from .base import AbstractDAESolver as AbstractDAESolver, AbstractDAEState as AbstractDAEState, StepInfo as StepInfo
from .generalized_alpha import GAState as GAState, GeneralizedAlpha as GeneralizedAlpha
from .ode_forms import AbstractODEForm as AbstractODEForm, Baumgarte as Baumgarte, UdwadiaKalaba as UdwadiaKalaba
from .rk4 import RK4 as RK4
from .simulate import simulate as simulate
from .simulate_ode import simulate_ode as simulate_ode
from .statics import StaticSolution as StaticSolution, solve_static as solve_static
