"""Backprop: a web app for preparing deep-learning and PyTorch interviews."""
