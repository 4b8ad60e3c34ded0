use quiver_live_core::js::{json, JsStr, Value};
use quiver_live_core::session::reducer::Host;
use quiver_live_core::session::store::{NewEvent, Store};
struct C; impl Host for C { fn now_ms(&self)->f64{0.0} fn date_parse_fallback(&self,_:&JsStr)->f64{f64::NAN} fn json_parse_message(&self,_:&str)->String{String::new()} }
fn main(){
  let text=std::fs::read_to_string("/work/main/bench/traffic/server-long-tune.jsonl").unwrap();
  let lines:Vec<String>=text.lines().map(|l|{ let mut v=json::parse(l).unwrap(); if let Value::Object(o)=&mut v { o.set("seq", Value::Number(0.0)); } json::stringify(&v).unwrap()}).collect();
  let dir=std::path::Path::new("/tmp/apb/p"); let _=std::fs::remove_dir_all(dir); std::fs::create_dir_all(dir.join(".git")).unwrap();
  let mut store=Store::open(dir,false).unwrap();
  let t=std::time::Instant::now(); let mut n=0;
  for r in 0..30 { let id=format!("ab{:06}",r); for l in &lines { let Ok(Value::Object(mut o))=json::parse(l) else {panic!()}; let value=o.remove("event").unwrap(); let ts=o.remove("ts").unwrap(); store.append(&id, NewEvent{value,ts,entry:l.clone()}, &C).unwrap(); n+=1; } }
  println!("{:.2} us/append", t.elapsed().as_secs_f64()*1e6/n as f64);
}
