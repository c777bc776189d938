"""Timing labs: what each lab measured, per device, and starting a lab run."""
