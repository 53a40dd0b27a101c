//! Worked examples of the LTRF compiler pass in the style of the paper's figures
//! (shared/papers/ltrf-latency-tolerant-register-file.txt §3.3, §4.3).

use sassim_analysis::ltrf::{analyze, bank_conflicts, renumber, LtrfOptions};
use sassim_analysis::RegSet;
use sassim_isa::Kernel;

fn kernel(text: &str) -> Kernel {
    sassim_sass::microbench::parse(text, "example.sass")
        .expect("parses")
        .kernel
}

fn set(s: &RegSet) -> String {
    s.to_string()
}

/// The paper's Listing 1 (compare two arrays of 100 elements, R6 = all equal) in SASS.
/// Line numbers of the PTX are in the comments.
const LISTING1: &str = "
    MOV R0, c[0x0][0x160] ;          // 1  mov R0, A
    MOV R1, c[0x0][0x164] ;          // 2  mov R1, B
    MOV R2, RZ ;                     // 3  mov R2, 0
    MOV R3, 0x64 ;                   // 4  mov R3, 100
L1: LDL R4, [R0] ;                   // 5
    LDL R5, [R1] ;                   // 6
    ISETP.EQ.AND P0, PT, R4, R5, PT ;// 7
    @!P0 BRA L2 ;                    // 8
    IADD3 R0, R0, 0x4, RZ ;          // 9
    IADD3 R1, R1, 0x4, RZ ;          // 10
    IADD3 R2, R2, 0x1, RZ ;          // 11
    ISETP.LT.AND P1, PT, R2, R3, PT ;// 12
    @P1 BRA L1 ;                     // 13
    MOV R6, 0x1 ;                    // 14
    BRA L3 ;                         // 15
L2: MOV R6, RZ ;                     // 16
L3: STG.E [R8.64], R6 ;              // (the result is stored)
    EXIT ;                           // 17
";

#[test]
fn listing1_intervals_with_four_registers() {
    // The §4.3 setting: at most four registers per interval, four banks.
    let opts = LtrfOptions {
        registers_per_interval: 4,
        banks: 4,
        merge: true,
        keep_modulo: 1,
    };
    let k = kernel(LISTING1);
    let l = analyze(&k, &opts);
    let ivs = &l.intervals.intervals;
    // (head, instruction ranges, working set) of every interval.
    type Summary = (usize, Vec<(usize, usize)>, String);
    let summary: Vec<Summary> = ivs
        .iter()
        .map(|iv| (iv.head, iv.ranges.clone(), set(&iv.working_set)))
        .collect();
    // Worked by hand with Algorithm 1 (whole-interval bound, blocks in program order):
    //  #0  lines 1-4: R0..R3 fill the four registers.
    //  #1  L1 (lines 5-8) is a loop header (entered from #0 and from the back edge): a new
    //      interval; lines 9-10 join it (their only predecessor is in #1, R0 and R1 are
    //      already there); line 11 would add R2, a fifth register: the block is cut.
    //  #2  lines 11-13 with R2, R3; lines 14-15 join (their predecessor is in #2): R6.
    //  #3  L2 (line 16) cannot join #1 (R6 would be a fifth register).
    //  #4  L3 (the store and exit) has predecessors in #2 and #3.
    assert_eq!(
        summary,
        vec![
            (0, vec![(0, 4)], "{R0, R1, R2, R3}".to_string()),
            (4, vec![(4, 10)], "{R0, R1, R4, R5}".to_string()),
            (10, vec![(10, 15)], "{R2, R3, R6}".to_string()),
            (15, vec![(15, 16)], "{R6}".to_string()),
            (16, vec![(16, 18)], "{R6, R8, R9}".to_string()),
        ]
    );
    // Pass 2 merges nothing: #1 ∪ #2 would be six registers.
    assert_eq!(l.intervals.pass1_intervals, 5);
    assert_eq!(l.intervals.pass2_rounds, 0);
    // Prefetches: LTRF fetches the working set; LTRF+ only what is live on entry.
    let p = &l.prefetches;
    assert_eq!(p[1].pc, 0x40);
    assert_eq!(set(&p[0].live), "{}", "lines 1-4 write R0..R3 before any read");
    assert_eq!(
        set(&p[1].live),
        "{R0, R1}",
        "R4/R5 are written before they are read"
    );
    // Warp-level liveness: lanes that left the loop for line 14 or L2 wait at L3 with
    // their R6 while the others iterate, so R6 is live in #2 and must be fetched.
    assert_eq!(set(&p[2].live), "{R2, R3, R6}");
    // Interleaved banks (r mod 4): R0/R4 and R1/R5 collide in #1, R2/R6 in #2.
    let conflicts: Vec<u32> = p.iter().map(|x| x.bank_conflicts).collect();
    assert_eq!(conflicts, vec![0, 1, 1, 0, 0]);
    assert_eq!(l.conflict_histogram(), vec![3, 2]);
}

#[test]
fn listing1_renumbering_resolves_the_conflicts() {
    let opts = LtrfOptions {
        registers_per_interval: 4,
        banks: 4,
        merge: true,
        keep_modulo: 1,
    };
    let k = kernel(LISTING1);
    let r = renumber(&k, &opts).expect("renumbers");
    assert_eq!(r.report.conflicts_before, vec![0, 1, 1, 0, 0]);
    assert_eq!(r.report.conflicts_after, vec![0, 0, 0, 0, 0]);
    // R8:R9 is read before any write (a kernel argument in a real kernel): it keeps its number.
    assert_eq!(r.report.fixed_nodes, 1);
    assert_eq!(r.report.budget, 10);
    // The intervals are the same ones, marked by labels at their heads.
    let heads: Vec<usize> = r.intervals.intervals.iter().map(|iv| iv.head).collect();
    assert_eq!(heads, vec![0, 4, 10, 15, 16]);
    let again = analyze(&r.kernel, &opts);
    assert!(again.from_labels);
    for (a, b) in again.prefetches.iter().zip(analyze(&k, &opts).prefetches.iter()) {
        assert_eq!(a.working_set.regular_len(), b.working_set.regular_len());
        assert_eq!(a.bank_conflicts, 0);
    }
    // Every interval's working set now sits in distinct banks.
    for iv in &r.intervals.intervals {
        assert_eq!(bank_conflicts(&iv.working_set, 4), 0, "{}", iv.working_set);
    }
}

#[test]
fn straight_line_code_is_cut_at_n_registers() {
    // Eleven registers in one block, eight per interval: the block is cut before the
    // instruction that would bring the ninth (R8, at the fourth add).
    let k = kernel(
        "IADD3 R0, R1, R2, RZ ;\n\
         IADD3 R3, R4, R5, RZ ;\n\
         IADD3 R6, R7, R0, RZ ;\n\
         IADD3 R8, R3, R6, RZ ;\n\
         IADD3 R9, R10, R8, RZ ;\n\
         IADD3 R0, R9, R10, RZ ;\n\
         EXIT ;",
    );
    let l = analyze(
        &k,
        &LtrfOptions {
            registers_per_interval: 8,
            ..LtrfOptions::default()
        },
    );
    let ivs = &l.intervals.intervals;
    assert_eq!(ivs.len(), 2);
    assert_eq!(ivs[0].ranges, vec![(0, 3)]);
    assert_eq!(set(&ivs[0].working_set), "{R0, R1, R2, R3, R4, R5, R6, R7}");
    assert_eq!(ivs[1].head, 3);
    assert_eq!(set(&ivs[1].working_set), "{R0, R3, R6, R8, R9, R10}");
    // LTRF+: R3, R6 (results of the first interval) and R10 (never written) are live into
    // the second; R0, R8 and R9 are written there before they are read.
    assert_eq!(set(&l.prefetches[1].live), "{R3, R6, R10}");
    // Dead-operand bits: R1, R2 die at the first add; R10 at its last read.
    assert_eq!(set(&l.dead[0]), "{R1, R2}");
    assert_eq!(set(&l.dead[5]), "{R9, R10}");
}

#[test]
fn nested_loops_fold_into_one_interval() {
    // The paper's Figure 5: A is the outer loop's header, B the inner loop, C the latch of
    // both. Pass 1 makes A one interval and B+C another (B has a predecessor outside
    // the first); pass 2 merges them, so one prefetch serves the whole loop nest.
    let k = kernel(
        "MOV R0, RZ ;\n\
         MOV R1, RZ ;\n\
         A: IADD3 R0, R0, 0x1, RZ ;\n\
         MOV R1, RZ ;\n\
         B: IADD3 R1, R1, 0x1, RZ ;\n\
         C: ISETP.NE.AND P0, PT, R1, 0x8, PT ;\n\
         @P0 BRA B ;\n\
         ISETP.NE.AND P1, PT, R0, 0x4, PT ;\n\
         @P1 BRA A ;\n\
         EXIT ;",
    );
    let no_merge = analyze(
        &k,
        &LtrfOptions {
            merge: false,
            ..LtrfOptions::default()
        },
    );
    let heads: Vec<usize> = no_merge.intervals.intervals.iter().map(|iv| iv.head).collect();
    // A (a loop header: entered from the entry and from C) and B (the inner header) start
    // intervals; the rest of the loop and the exit join B's.
    assert_eq!(heads, vec![0, 2, 4]);
    let merged = analyze(&k, &LtrfOptions::default());
    let heads: Vec<usize> = merged.intervals.intervals.iter().map(|iv| iv.head).collect();
    // Round 1 folds the inner loop's interval into A's (its only predecessor apart from
    // itself); round 2 folds that into the entry interval.
    assert_eq!(heads, vec![0]);
    assert_eq!(merged.intervals.pass2_rounds, 2);
    assert_eq!(set(&merged.prefetches[0].working_set), "{R0, R1}");
}
