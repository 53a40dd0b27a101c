//! Link as NVIDIA's runtime: soname `libcudart.so.12` and the symbol version node that
//! nvcc-built programs require (`cudaMalloc@libcudart.so.12`).
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    println!("cargo:rerun-if-changed=libcudart.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcudart.so.12");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={dir}/libcudart.map");
}
