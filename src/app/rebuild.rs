//! `sitegen serve`'s rebuild of what a change touches. A site of years of
//! nightly runs takes seconds to build; a new or edited run changes its own
//! page, its series, the comparisons it is in and the lists, not the other
//! thousands of pages. The runs of the folders that changed are read again,
//! the series judged again from their first changed run, and a part of the
//! site (`site::Part`) is rendered again only when what it is made from
//! changed. The result is the full build's, byte for byte
//! (tests/site/serve_rebuild.rs holds it to that).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::app::pipeline::{self, BuildOptions, BuildSummary, Loaded};
use crate::app::site::{Part, Site};
use crate::app::sources::{Key, Sourced, Sources};
use crate::model::Run;

/// A site in memory and what it was built from, updated change by change.
pub struct Rebuilder {
    data_dir: PathBuf,
    /// The same, as a watcher may name it (absolute, links resolved).
    canonical: Option<PathBuf>,
    opts: BuildOptions,
    loaded: Loaded,
    /// Runs read but left out of the site (nothing to show), by id.
    empty: BTreeSet<String>,
    site: Site,
    /// Each part's files and what it was made from.
    parts: HashMap<Key, (Vec<String>, Sources)>,
    /// Every run's row of the lists, in the runs' order.
    rows: Vec<crate::render::index_page::Row>,
    /// Where each run's rows end in each series' CSV, to keep those rows.
    csv_ends: HashMap<Key, Vec<usize>>,
}

/// A part to render again: as a build renders it, or a series' CSV after
/// the rows of its first runs whose judgement did not change (where they
/// end), which stay where they are.
enum Job<'a> {
    Part(Part),
    SeriesCsv(usize, &'a [usize]),
}

/// A series' CSV made again: where each run's rows end, and where the rows
/// kept from the site end (none kept: the file made is the whole file).
struct CsvMade {
    kept_end: Option<usize>,
    ends: Vec<usize>,
}

/// What an update did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    pub summary: BuildSummary,
    /// Files rendered again (of `summary.files`).
    pub rendered: usize,
    /// Whether the whole site was built again (a change outside the runs'
    /// folders: comparisons, prices, latency budgets, noted changes).
    pub full: bool,
}

impl Rebuilder {
    /// Builds the site of `data_dir` in memory.
    pub fn new(data_dir: &Path, opts: BuildOptions) -> anyhow::Result<(Rebuilder, BuildSummary)> {
        // Rendered in memory, every part: no previous build to take from,
        // so nothing is hashed.
        let loaded = pipeline::load(
            data_dir,
            BuildOptions {
                fresh: true,
                ..opts
            },
        )?;
        let mut me = Rebuilder {
            data_dir: data_dir.to_path_buf(),
            canonical: data_dir.canonicalize().ok(),
            opts,
            empty: BTreeSet::new(),
            loaded,
            site: Site::default(),
            parts: HashMap::new(),
            rows: Vec::new(),
            csv_ends: HashMap::new(),
        };
        me.empty = me.empty_runs();
        let (summary, _) = me.render(None)?;
        Ok((me, summary))
    }

    /// The site as it stands.
    pub fn site(&self) -> &Site {
        &self.site
    }

    /// Takes in the changes of `paths` (files or folders under the data
    /// folder, as a watcher reports them). On an error (a broken file) the
    /// site stays as it was.
    pub fn update(&mut self, paths: &[PathBuf]) -> anyhow::Result<Update> {
        let Some(ids) = self.changed_runs(paths) else {
            return self.rebuild_all();
        };
        self.update_runs(&ids)
    }

    /// Whether a change of `paths` needs the whole site built again (see
    /// [`Update::full`]): `sitegen serve` does that without holding the site.
    pub fn needs_full_build(&self, paths: &[PathBuf]) -> bool {
        self.changed_runs(paths).is_none()
    }

    fn update_runs(&mut self, ids: &BTreeSet<String>) -> anyhow::Result<Update> {
        let dir = &self.data_dir;
        // Each changed folder read again: a run, or gone.
        let mut read: Vec<(String, Option<Run>)> = Vec::new();
        for id in ids {
            let path = dir.join(id);
            let run = if path.is_dir() {
                Some(crate::store::load_run(&path)?)
            } else {
                None
            };
            read.push((id.clone(), run));
        }
        let file = crate::store::load_comparisons(dir)?;
        let old = &self.loaded;
        let mut changed: HashSet<String> = HashSet::new();
        let mut runs: Vec<Run> = Vec::with_capacity(old.runs.len() + read.len());
        let mut fresh: HashMap<&str, &Run> = HashMap::new();
        for (id, run) in &read {
            let before = old.runs.iter().find(|r| &r.id == id);
            if before != run.as_ref() {
                changed.insert(id.clone());
            }
            if let Some(run) = run {
                fresh.insert(id, run);
            }
        }
        if changed.is_empty() {
            return Ok(Update {
                summary: self.summary(),
                rendered: 0,
                full: false,
            });
        }
        let earlier: Vec<crate::judge::series::Earlier> = old
            .series
            .iter()
            .map(|s| crate::judge::series::Earlier::of(s, &old.runs, |r| !changed.contains(&r.id)))
            .collect();
        let (prices, slo) = (old.prices.clone(), old.slo.clone());
        // The runs moved, not copied (thousands of them); the old versions
        // of those read again set aside, to be put back on an error.
        let mut set_aside: Vec<Run> = Vec::new();
        for run in std::mem::take(&mut self.loaded.runs) {
            if ids.contains(&run.id) {
                set_aside.push(run);
            } else {
                runs.push(run);
            }
        }
        runs.extend(fresh.values().map(|r| (*r).clone()));
        // Runs left out as empty before and not read now stay left out.
        for id in &self.empty {
            if !ids.contains(id)
                && let Ok(run) = crate::store::load_run(&dir.join(id))
            {
                runs.push(run);
            }
        }
        runs.sort_by(|a, b| a.id.cmp(&b.id));
        let loaded = match pipeline::assemble(dir, runs, &file, prices, slo, self.opts, &earlier) {
            Ok(loaded) => loaded,
            Err(refused) => {
                let mut runs = refused.runs;
                runs.retain(|r| !ids.contains(&r.id));
                runs.extend(set_aside);
                runs.sort_by(|a, b| a.id.cmp(&b.id));
                self.loaded.runs = runs;
                return Err(refused.error);
            }
        };
        let previous = std::mem::replace(&mut self.loaded, loaded);
        // The runs left out: those before that were not read now, and those
        // read now with nothing to show.
        self.empty.retain(|id| !ids.contains(id));
        let shown: HashSet<&str> = self.loaded.runs.iter().map(|r| r.id.as_str()).collect();
        self.empty.extend(
            read.iter()
                .filter(|(id, run)| run.is_some() && !shown.contains(id.as_str()))
                .map(|(id, _)| id.clone()),
        );
        let (summary, rendered) = self.render(Some((&previous, &changed)))?;
        Ok(Update {
            summary,
            rendered,
            full: false,
        })
    }

    /// The ids of the runs whose folders `paths` touch; none when a path is
    /// outside every run's folder (a file of the data folder itself).
    fn changed_runs(&self, paths: &[PathBuf]) -> Option<BTreeSet<String>> {
        let mut ids = BTreeSet::new();
        for path in paths {
            let rel = path
                .strip_prefix(&self.data_dir)
                .ok()
                .or_else(|| path.strip_prefix(self.canonical.as_ref()?).ok())?;
            let mut parts = rel.components();
            let first = parts.next()?.as_os_str().to_string_lossy().into_owned();
            // A hidden folder is an interrupted or ongoing write (store/atomic.rs): not read.
            if first.starts_with('.') {
                continue;
            }
            let is_run = self.data_dir.join(&first).is_dir()
                || self.loaded.runs.iter().any(|r| r.id == first)
                || self.empty.contains(&first);
            if !is_run {
                return None;
            }
            ids.insert(first);
        }
        Some(ids)
    }

    /// The build from scratch, keeping the site as it is on an error.
    fn rebuild_all(&mut self) -> anyhow::Result<Update> {
        let (me, summary) = Rebuilder::new(&self.data_dir, self.opts)?;
        let rendered = summary.files;
        *self = me;
        Ok(Update {
            summary,
            rendered,
            full: true,
        })
    }

    /// The folders under the data folder that hold a run left out of the site.
    fn empty_runs(&self) -> BTreeSet<String> {
        let shown: HashSet<&str> = self.loaded.runs.iter().map(|r| r.id.as_str()).collect();
        std::fs::read_dir(&self.data_dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.') && !shown.contains(n.as_str()))
            .collect()
    }

    fn summary(&self) -> BuildSummary {
        BuildSummary {
            runs: self.loaded.runs.len(),
            files: self.site.files.len(),
            reused: 0,
            runs_unchanged: 0,
            warnings: self
                .loaded
                .left_out
                .iter()
                .cloned()
                .chain(crate::compare::plan::unpaired_warnings(&self.loaded.runs))
                .collect(),
        }
    }

    /// Renders the parts whose sources or runs changed since `previous`
    /// (every part when there is none); returns the summary and how many
    /// files were rendered.
    fn render(
        &mut self,
        previous: Option<(&Loaded, &HashSet<String>)>,
    ) -> anyhow::Result<(BuildSummary, usize)> {
        // The rows of the runs that did not change, under the same name,
        // kept (none after a failed render: they may be of runs since changed).
        let old_rows = std::mem::take(&mut self.rows);
        let rows = {
            let kept: HashMap<&str, &crate::render::index_page::Row> = match previous {
                Some((_, changed)) => old_rows
                    .iter()
                    .filter(|r| !changed.contains(&r.id))
                    .map(|r| (r.id.as_str(), r))
                    .collect(),
                None => HashMap::new(),
            };
            let runs = &self.loaded.runs;
            crate::render::index_page::run_rows(runs, &self.loaded.slo, |i, name| {
                kept.get(runs[i].id.as_str())
                    .filter(|r| r.name == name)
                    .map(|r| (*r).clone())
            })
        };
        let mut inputs = self.loaded.inputs();
        inputs.rows = Some(&rows);
        let places = inputs.places();
        let runs = inputs.runs;
        let wanted: Vec<Sourced> = crate::app::sources::of_every_part(&inputs, &places);
        let stale = |key: &Key, sources: &Sources, shows: &[String]| -> bool {
            let Some((_, changed)) = previous else {
                return true;
            };
            match self.parts.get(key) {
                None => true,
                Some((_, was)) => {
                    *sources == Sources::Lists
                        || was != sources
                        || shows.iter().any(|id| changed.contains(id))
                }
            }
        };
        let to_render: Vec<usize> = (0..wanted.len())
            .filter(|&w| stale(&wanted[w].key, &wanted[w].sources, &wanted[w].shows))
            .collect();
        // A series' CSV keeps the rows of its first runs while they are the
        // same runs, unchanged, with the same labels and judgements.
        let kept_ends = |k: usize, key: &Key| -> &[usize] {
            let Some((_, changed)) = previous else {
                return &[];
            };
            let (Some((_, Sources::Series(old, old_ids))), Some(ends)) =
                (self.parts.get(key), self.csv_ends.get(key))
            else {
                return &[];
            };
            let new = &inputs.series[k];
            let kept = (0..ends.len().min(new.runs.len()))
                .take_while(|&i| {
                    let id = &runs[new.runs[i]].id;
                    old_ids.get(i) == Some(id)
                        && !changed.contains(id)
                        && old.labels.get(i) == new.labels.get(i)
                        && old.judgements.get(i) == new.judgements.get(i)
                })
                .count();
            &ends[..kept]
        };
        let jobs: Vec<Job> = to_render
            .iter()
            .map(|&w| match wanted[w].part {
                Part::SeriesCsv(k) => Job::SeriesCsv(k, kept_ends(k, &wanted[w].key)),
                ref part => Job::Part(part.clone()),
            })
            .collect();
        // Render first, change nothing until every part rendered. All at
        // once (the site is in memory anyway): the few heavy parts (a
        // series, the lists) each on a core.
        let made = crate::threads::map_in_order(&jobs, |job| match job {
            Job::Part(part) => Ok((inputs.render(part, &places)?, None)),
            Job::SeriesCsv(k, kept) => {
                let s = &inputs.series[*k];
                let (after, ends) = inputs.series_csv_after(s, kept);
                let path = crate::app::site::Inputs::series_csv_path(s);
                let made = CsvMade {
                    kept_end: kept.last().copied(),
                    ends,
                };
                Ok((vec![(path, after)], Some(made)))
            }
        });
        drop(jobs);
        let (mut per_part, csvs): (Vec<Vec<crate::app::site::File>>, Vec<Option<CsvMade>>) = made
            .into_iter()
            .collect::<anyhow::Result<Vec<_>>>()?
            .into_iter()
            .unzip();
        let rendered: usize = per_part.iter().map(Vec::len).sum();
        // Every part rendered: a CSV's new rows put after its kept ones, in
        // the file as it is (not a copy of tens of MB).
        for (made, csv) in per_part.iter_mut().zip(&csvs) {
            if let (
                Some(CsvMade {
                    kept_end: Some(kept_end),
                    ..
                }),
                [(path, after)],
            ) = (csv, &mut made[..])
            {
                let mut bytes = self
                    .site
                    .files
                    .remove(path.as_str())
                    .expect("a series' CSV with kept rows is in the site");
                bytes.truncate(*kept_end);
                bytes.extend_from_slice(after);
                *after = bytes;
            }
        }
        let csv_ends = csvs.into_iter().map(|c| c.map(|c| c.ends));

        // Parts no longer in the site, and the old files of those rendered again.
        let keep: HashSet<&Key> = wanted.iter().map(|w| &w.key).collect();
        let gone: Vec<Key> = self
            .parts
            .keys()
            .filter(|k| !keep.contains(k))
            .cloned()
            .collect();
        for key in gone {
            self.csv_ends.remove(&key);
            if let Some((paths, _)) = self.parts.remove(&key) {
                for p in paths {
                    self.site.files.remove(&p);
                }
            }
        }
        for ((&w, made), ends) in to_render.iter().zip(per_part).zip(csv_ends) {
            let Sourced { key, sources, .. } = &wanted[w];
            if let Some(ends) = ends {
                self.csv_ends.insert(key.clone(), ends);
            }
            if let Some((paths, _)) = self.parts.remove(key) {
                for p in paths {
                    self.site.files.remove(&p);
                }
            }
            let paths = made.iter().map(|(p, _)| p.clone()).collect();
            self.site.files.extend(made);
            self.parts.insert(key.clone(), (paths, sources.clone()));
        }
        self.rows = rows;

        Ok((self.summary(), rendered))
    }
}
