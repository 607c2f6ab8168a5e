"""foldbot: measures the setup tax of AMD GPU CI jobs and proposes verified patches."""

__version__ = "0.1.0"
