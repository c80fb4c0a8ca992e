//! The network layer: the per-connection loop (framing, the request budget of `queued.max.request.bytes`, in-order
//! responses) in [`connection`], the budget's parts (a reserve for small frames) in [`budget`], the connection limits per listener and per IP in [`limits`], and `SO_RCVLOWAT`
//! while a large frame arrives in [`low_water`]; [`replay`] serves a byte buffer as a connection's stream (fuzzing).

pub(crate) mod budget;
pub(crate) mod connection;
pub(crate) mod limits;
// setsockopt(SO_RCVLOWAT); the crate's other unsafe code is crate::heap's malloc_trim and crate::codec::parts'
// BufMut.
#[allow(unsafe_code)]
pub(crate) mod low_water;
pub(crate) mod replay;
