//! The one way aiq builds an async runtime: a current-thread tokio runtime
//! that a synchronous caller blocks on. Each model and each server source
//! owns one, so the front ends and the agent core stay synchronous.

/// A current-thread runtime with IO and timers enabled.
pub(crate) fn current_thread() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}
