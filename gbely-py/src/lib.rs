//! The `gbely` Python package (pyo3 + maturin) — built in its own issue.
