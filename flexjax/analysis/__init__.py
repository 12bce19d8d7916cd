"""Analyses: natural frequencies of a linearized system (`modal`), FLFJ beam modes and
critical joint stiffness (`flfj`), a reference beam FE model (`beam_fe`),
Baumgarte stability regions (`stability`), interval uncertainty (`interval`)."""

from . import (
    interval as interval,  # interval uncertainty: sampling, vertices, gradient search
    stability as stability,  # Baumgarte stability regions
)
from .beam_fe import (
    beam_fe_frequencies as beam_fe_frequencies,
    beam_fe_matrices as beam_fe_matrices,
    hub_beam_fe_matrices as hub_beam_fe_matrices,
)
from .flfj import (
    ModeCoefficients as ModeCoefficients,
    ShapeTables as ShapeTables,
    axial_modes as axial_modes,
    bracket_roots as bracket_roots,
    cached_shape_tables as cached_shape_tables,
    cantilever_roots as cantilever_roots,
    critical_stiffness as critical_stiffness,
    critical_stiffness_coefficient as critical_stiffness_coefficient,
    eval_modes as eval_modes,
    flfj_frequencies as flfj_frequencies,
    flfj_roots as flfj_roots,
    frequencies_hz as frequencies_hz,
    frequency_function as frequency_function,
    frequency_ratio as frequency_ratio,
    gauss_legendre as gauss_legendre,
    integration_matrix as integration_matrix,
    kappa_from_root as kappa_from_root,
    mode_coefficients as mode_coefficients,
    refine_roots as refine_roots,
    shape_tables as shape_tables,
    transverse_modes as transverse_modes,
)
from .interval import (
    Envelope as Envelope,
    ExtremeResult as ExtremeResult,
    Interval as Interval,
    IntervalResult as IntervalResult,
    check_samples as check_samples,
    compare as compare,
    envelope as envelope,
    extreme_search as extreme_search,
    format_comparison as format_comparison,
    interval_analysis as interval_analysis,
    vertex_method as vertex_method,
)
from .modal import Modes as Modes, modes as modes
