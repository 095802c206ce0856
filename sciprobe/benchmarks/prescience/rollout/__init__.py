"""PreScience corpus-generation rollouts (paper §4.5, Figure 3, Appendix C.7): ``sciprobe prescience rollout``.

Modules, in the order a run uses them: :mod:`.params` (the paper's parameters), :mod:`.calibration` (train-period
distributions), :mod:`.literature` (H^{<t} with a guard against the future), :mod:`.policy` (the composed task
models), :mod:`.simulate` (the day loop and its journal), :mod:`.corpus` (release-layout output),
:mod:`.metrics` (diversity and novelty, upstream's analysis), :mod:`.analysis` (judging), :mod:`.run` (the
command), :mod:`.report` (the Figure 3 view).
"""
