"""Analyses: modes of the FLFJ beam, critical joint stiffness, a reference beam FE model."""

from .beam_fe import beam_fe_frequencies as beam_fe_frequencies, beam_fe_matrices as beam_fe_matrices
from .flfj import (
    axial_modes as axial_modes,
    cantilever_roots as cantilever_roots,
    critical_stiffness as critical_stiffness,
    critical_stiffness_coefficient as critical_stiffness_coefficient,
    flfj_frequencies as flfj_frequencies,
    flfj_roots as flfj_roots,
    frequency_function as frequency_function,
    frequency_ratio as frequency_ratio,
    frequencies_hz as frequencies_hz,
    gauss_legendre as gauss_legendre,
    kappa_from_root as kappa_from_root,
    transverse_modes as transverse_modes,
)
