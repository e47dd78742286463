//! The Council (placeholder until its own issue).
