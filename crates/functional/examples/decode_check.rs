fn main() {
    let mut unsup = std::collections::BTreeMap::<String, Vec<String>>::new();
    for p in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&p).unwrap();
        let l = match sassim_sass::parse_listing(&text, &p) {
            Ok(l) => l,
            Err(e) => {
                println!("PARSE {p}: {e}");
                continue;
            }
        };
        for k in &l.kernels {
            for ins in &k.instructions {
                let d = sassim_functional::decode::decode(ins);
                if let sassim_functional::decode::Op::Unsupported(s) = &d.op {
                    unsup.entry(s.clone()).or_default().push(format!(
                        "{} {}",
                        p.rsplit('/').next().unwrap(),
                        ins.body()
                    ));
                }
            }
        }
    }
    for (k, v) in unsup {
        println!("{k}  x{}  e.g. {}", v.len(), v[0]);
    }
}
