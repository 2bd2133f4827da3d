"""Triton kernels that build and read a real KV cache (installed as kvplan.kernels).

One kernel per module, each with its launcher and a plain torch reference.
Needs the `bench` extra (torch, triton). On a machine without CUDA set
TRITON_INTERPRET=1 before importing any kernel module.
"""
