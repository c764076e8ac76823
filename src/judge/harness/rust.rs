
// crucible's assert harness for Rust (see docs/TASKS.md, "What the assert and command harnesses
// can and cannot prove"), appended to main.rs after the test code. The test binary runs with
// --test-threads=1, so libtest runs the tests one by one in the order of their names: the first
// is A_crucible_begin, which reads the run's token from stdin (the assert harness gives nothing
// else there), closes stdin and keeps the token, as two random shares, in a static private to
// module zzzz_crucible (no code outside it can name the static); the last one of the task's is
// zzzz_crucible::end, which writes the token on a line of its own. A process::exit, an abort or
// a signal before it ends the run without the token, and crucible fails the test; a failed test
// makes libtest exit 101.
//
// What it cannot stop: tests the solution defines itself with names sorting after
// zzzz_crucible::end (they run after the token, and one calling process::exit(0) hides earlier
// failures) or before A_crucible_begin (they could read stdin first); code that runs before
// main (a function in .init_array); unsafe code reading the process's memory; PartialEq
// implementations of the solution's own types (a rigged ==).

#[cfg(test)]
#[test]
#[allow(non_snake_case)]
fn A_crucible_begin() {
    zzzz_crucible::begin();
}

#[cfg(test)]
mod zzzz_crucible {
    use std::hash::{BuildHasher, Hasher};
    use std::io::{Read, Write};
    use std::os::unix::io::FromRawFd;
    use std::sync::Mutex;

    static SHARES: Mutex<Option<([u8; 16], [u8; 16])>> = Mutex::new(None);

    pub(super) fn begin() {
        let mut raw = Vec::new();
        let _ = std::io::stdin().lock().read_to_end(&mut raw);
        unsafe { drop(std::fs::File::from_raw_fd(0)) };
        if let Ok(f) = std::fs::File::open("/dev/null") {
            std::mem::forget(f);
        }
        let mut a = [0u8; 16];
        for half in 0..2 {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_usize(half);
            a[half * 8..half * 8 + 8].copy_from_slice(&h.finish().to_le_bytes());
        }
        let text: Vec<u8> = raw.iter().copied().filter(|c| !c.is_ascii_whitespace()).collect();
        let mut b = [0u8; 16];
        let mut valid = text.len() == 32;
        for i in 0..32 {
            if !valid {
                break;
            }
            let v = match text[i] {
                c @ b'0'..=b'9' => c - b'0',
                c @ b'a'..=b'f' => c - b'a' + 10,
                _ => {
                    valid = false;
                    0
                }
            };
            if i % 2 == 0 {
                b[i / 2] = v << 4;
            } else {
                b[i / 2] = (b[i / 2] | v) ^ a[i / 2];
            }
        }
        raw.iter_mut().for_each(|c| *c = 0);
        *SHARES.lock().unwrap_or_else(|e| e.into_inner()) = if valid { Some((a, b)) } else { None };
    }

    #[test]
    fn end() {
        let shares = SHARES.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((a, b)) = shares {
            let hex = b"0123456789abcdef";
            let mut line = [b'\n'; 34];
            for i in 0..16 {
                let v = a[i] ^ b[i];
                line[1 + 2 * i] = hex[(v >> 4) as usize];
                line[2 + 2 * i] = hex[(v & 15) as usize];
            }
            let mut out = unsafe { std::fs::File::from_raw_fd(1) };
            let _ = out.write_all(&line);
            std::mem::forget(out);
        }
    }
}
