"""The learned screen's training data and fitting: not imported at run time.

``generator.py`` writes labelled windows from templates (``templates.py``), carrier
prose (``carriers.py``), hard negatives (``negatives.py``) and disguises
(``obfuscations.py``), all from one seed; ``fitting.py`` fits the window classifier and
picks its threshold on a validation split. ``bench/train_screen.py`` runs both and
writes ``screening/window_model.npz``.
"""
