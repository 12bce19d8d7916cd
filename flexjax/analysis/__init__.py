"""Analyses: natural frequencies of a linearized system (`modal`), FLFJ beam modes and
critical joint stiffness (`flfj`), a reference beam FE model (`beam_fe`),
Baumgarte stability regions (`stability`), interval uncertainty (`interval`)."""

from . import interval as interval  # interval uncertainty: sampling, vertices, gradient search
from . import stability as stability  # Baumgarte stability regions
from .beam_fe import (
    beam_fe_frequencies as beam_fe_frequencies,
)
from .beam_fe import (
    beam_fe_matrices as beam_fe_matrices,
)
from .beam_fe import (
    hub_beam_fe_matrices as hub_beam_fe_matrices,
)
from .flfj import (
    ModeCoefficients as ModeCoefficients,
)
from .flfj import (
    ShapeTables as ShapeTables,
)
from .flfj import (
    axial_modes as axial_modes,
)
from .flfj import (
    bracket_roots as bracket_roots,
)
from .flfj import (
    cached_shape_tables as cached_shape_tables,
)
from .flfj import (
    cantilever_roots as cantilever_roots,
)
from .flfj import (
    critical_stiffness as critical_stiffness,
)
from .flfj import (
    critical_stiffness_coefficient as critical_stiffness_coefficient,
)
from .flfj import (
    eval_modes as eval_modes,
)
from .flfj import (
    flfj_frequencies as flfj_frequencies,
)
from .flfj import (
    flfj_roots as flfj_roots,
)
from .flfj import (
    frequencies_hz as frequencies_hz,
)
from .flfj import (
    frequency_function as frequency_function,
)
from .flfj import (
    frequency_ratio as frequency_ratio,
)
from .flfj import (
    gauss_legendre as gauss_legendre,
)
from .flfj import (
    integration_matrix as integration_matrix,
)
from .flfj import (
    kappa_from_root as kappa_from_root,
)
from .flfj import (
    mode_coefficients as mode_coefficients,
)
from .flfj import (
    refine_roots as refine_roots,
)
from .flfj import (
    shape_tables as shape_tables,
)
from .flfj import (
    transverse_modes as transverse_modes,
)
from .interval import (
    Envelope as Envelope,
)
from .interval import (
    ExtremeResult as ExtremeResult,
)
from .interval import (
    Interval as Interval,
)
from .interval import (
    IntervalResult as IntervalResult,
)
from .interval import (
    check_samples as check_samples,
)
from .interval import (
    compare as compare,
)
from .interval import (
    envelope as envelope,
)
from .interval import (
    extreme_search as extreme_search,
)
from .interval import (
    format_comparison as format_comparison,
)
from .interval import (
    interval_analysis as interval_analysis,
)
from .interval import (
    vertex_method as vertex_method,
)
from .modal import Modes as Modes
from .modal import modes as modes
