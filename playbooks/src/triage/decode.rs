//! Number-to-meaning tables the logs need: verbs work-completion status codes. (NVIDIA Xid codes
//! have one table, shared with `check`: `fabricdoctor_probes::gpu::xid::xid_meaning`.)

/// `enum ibv_wc_status` (rdma-core `libibverbs/verbs.h`) and the text `ibv_wc_status_str()` gives,
/// with what the status usually means on a GPU fabric.
pub fn wc_status(status: u32) -> (&'static str, &'static str) {
    match status {
        0 => ("IBV_WC_SUCCESS", "success"),
        1 => ("IBV_WC_LOC_LEN_ERR", "local length error"),
        2 => ("IBV_WC_LOC_QP_OP_ERR", "local QP operation error"),
        3 => ("IBV_WC_LOC_EEC_OP_ERR", "local EE context operation error"),
        4 => ("IBV_WC_LOC_PROT_ERR", "local protection error: the NIC could not access the registered buffer (with GPUDirect, typically ACS/IOMMU redirecting peer-to-peer traffic)"),
        5 => ("IBV_WC_WR_FLUSH_ERR", "work request flushed: the QP was already in error; look for the first, non-flush error"),
        6 => ("IBV_WC_MW_BIND_ERR", "memory window bind error"),
        7 => ("IBV_WC_BAD_RESP_ERR", "bad response error"),
        8 => ("IBV_WC_LOC_ACCESS_ERR", "local access error"),
        9 => ("IBV_WC_REM_INV_REQ_ERR", "remote invalid request error"),
        10 => ("IBV_WC_REM_ACCESS_ERR", "remote access error"),
        11 => ("IBV_WC_REM_OP_ERR", "remote operation error"),
        12 => ("IBV_WC_RETRY_EXC_ERR", "transport retry counter exceeded: the peer never acknowledged (packets lost, or the peer unreachable with this GID/route)"),
        13 => ("IBV_WC_RNR_RETRY_EXC_ERR", "RNR retry counter exceeded: the receiver posted no buffers in time"),
        14 => ("IBV_WC_LOC_RDD_VIOL_ERR", "local RDD violation error"),
        15 => ("IBV_WC_REM_INV_RD_REQ_ERR", "remote invalid RD request"),
        16 => ("IBV_WC_REM_ABORT_ERR", "operation aborted"),
        17 => ("IBV_WC_INV_EECN_ERR", "invalid EE context number"),
        18 => ("IBV_WC_INV_EEC_STATE_ERR", "invalid EE context state"),
        19 => ("IBV_WC_FATAL_ERR", "fatal error"),
        20 => ("IBV_WC_RESP_TIMEOUT_ERR", "response timeout error"),
        21 => ("IBV_WC_GENERAL_ERR", "general error"),
        22 => ("IBV_WC_TM_ERR", "tag matching error"),
        23 => ("IBV_WC_TM_RNDV_INCOMPLETE", "tag matching rendezvous incomplete"),
        _ => ("unknown", "status not in rdma-core's ibv_wc_status"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wc_status_names_follow_verbs_h() {
        assert_eq!(wc_status(12).0, "IBV_WC_RETRY_EXC_ERR");
        assert_eq!(wc_status(5).0, "IBV_WC_WR_FLUSH_ERR");
        assert_eq!(wc_status(4).0, "IBV_WC_LOC_PROT_ERR");
        assert_eq!(wc_status(99).0, "unknown");
    }
}
