//! Opening a vendor library at run time (dlopen(3)) so the binary links only libc: NVML and the CUDA
//! driver ship with the NVIDIA driver, and a node without it must still run every other probe.
#![expect(unsafe_code, reason = "dlopen(3)/dlsym(3) are the only way to bind a library found at run time")]

use std::ffi::{c_void, CStr, CString};

/// Why a library or one of its functions could not be bound.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    #[error("{library} not found: {reason}")]
    Library { library: String, reason: String },
    #[error("{library} has no function {symbol}")]
    Symbol { library: String, symbol: String },
}

/// An opened shared library. It is never closed: the NVIDIA libraries start threads and keep state
/// that must outlive every handle given out (dlclose of libcuda while a context exists crashes).
#[derive(Debug)]
pub struct Library {
    handle: *mut c_void,
    name: String,
}

// SAFETY: a dlopen handle is a process-wide token; dlsym on it is thread-safe (POSIX dlsym(3)).
unsafe impl Send for Library {}
// SAFETY: as above; the handle is never mutated after opening.
unsafe impl Sync for Library {}

impl Library {
    /// Open the first of `names` the dynamic linker finds (ld.so(8) search order).
    pub fn open(names: &[&str]) -> Result<Library, LoadError> {
        let mut reasons = Vec::new();
        for name in names {
            let Ok(c_name) = CString::new(*name) else { continue };
            // SAFETY: c_name is a valid NUL-terminated string; RTLD_NOW resolves everything up front so a
            // broken install fails here and not at a later call.
            let handle = unsafe { libc::dlopen(c_name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if !handle.is_null() {
                return Ok(Library { handle, name: (*name).to_string() });
            }
            reasons.push(last_dl_error());
        }
        Err(LoadError::Library { library: names.join(" or "), reason: reasons.join("; ") })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The address of `symbol`, as the function pointer type `F`.
    ///
    /// # Safety
    /// `F` must be an `extern "C" fn` type matching the C prototype of `symbol` in the library's header.
    pub unsafe fn function<F: Copy>(&self, symbol: &CStr) -> Result<F, LoadError> {
        assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>(), "F must be a function pointer");
        // SAFETY: the handle is open for the life of self; symbol is NUL-terminated.
        let address = unsafe { libc::dlsym(self.handle, symbol.as_ptr()) };
        if address.is_null() {
            return Err(LoadError::Symbol {
                library: self.name.clone(),
                symbol: symbol.to_string_lossy().into_owned(),
            });
        }
        // SAFETY: the caller promises F is the function's pointer type; sizes were checked above.
        Ok(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&address) })
    }
}

fn last_dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the next dl* call on this thread.
    let message = unsafe { libc::dlerror() };
    if message.is_null() {
        "unknown dlopen error".to_string()
    } else {
        // SAFETY: non-null, NUL-terminated (above).
        unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_a_named_error() {
        let error = Library::open(&["libfabricdoctor-does-not-exist.so.1"]).expect_err("missing");
        assert!(error.to_string().starts_with("libfabricdoctor-does-not-exist.so.1 not found"), "{error}");
    }

    #[test]
    fn libc_functions_bind_and_missing_ones_are_named() {
        let libc_library = Library::open(&["libc.so.6"]).expect("libc");
        // SAFETY: getpid(2) takes nothing and returns pid_t.
        let getpid: unsafe extern "C" fn() -> libc::pid_t =
            unsafe { libc_library.function(c"getpid") }.expect("getpid");
        // SAFETY: getpid has no preconditions.
        assert_eq!(unsafe { getpid() } as u32, std::process::id());
        // SAFETY: never called.
        let missing = unsafe { libc_library.function::<unsafe extern "C" fn()>(c"fabricdoctor_no_such_symbol") };
        assert!(matches!(missing, Err(LoadError::Symbol { .. })));
    }
}
