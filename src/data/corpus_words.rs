//! Word lists of the generated corpus (kept apart so corpus.rs stays about the logic). All ASCII,
//! written for this project: real place names, common job titles, name syllables.

/// Birthplaces and other places, most common first: single ASCII words, cities and countries.
/// The generator weights rank k by 1/(k+3), so London is ≈8% of birthplaces.
#[rustfmt::skip]
pub const PLACES: &[&str] = &[
    "London", "Paris", "Berlin", "Vienna", "Dublin", "Glasgow", "Rome", "Madrid", "Boston",
    "Chicago", "Toronto", "Sydney", "Moscow", "Warsaw", "Prague", "Budapest", "Athens", "Cairo",
    "Lagos", "Nairobi", "Mumbai", "Delhi", "Tokyo", "Osaka", "Seoul", "Beijing", "Shanghai",
    "Manila", "Jakarta", "Lima", "Santiago", "Havana", "Montreal", "Melbourne", "Auckland",
    "Edinburgh", "Manchester", "Liverpool", "Philadelphia", "Baltimore", "Istanbul", "Lisbon",
    "Brazil", "Argentina", "Canada", "Australia", "Ireland", "Scotland", "Wales", "England",
    "France", "Germany", "Italy", "Spain", "Norway", "Sweden", "Denmark", "Finland", "Poland",
    "Japan", "India", "Egypt", "Kenya", "Chile", "Belgium", "Austria", "Greece", "Hungary",
];

#[rustfmt::skip]
pub const JOBS: &[&str] = &[
    "painter", "poet", "novelist", "journalist", "architect", "engineer", "politician",
    "footballer", "composer", "pianist", "violinist", "actor", "singer", "sculptor",
    "photographer", "historian", "physician", "chemist", "physicist", "botanist",
    "mathematician", "lawyer", "judge", "diplomat", "bishop", "teacher", "economist",
    "cricketer", "boxer", "cyclist", "film director", "playwright", "printer", "banker",
    "philosopher", "translator", "surveyor", "missionary",
];

/// Essay titles: the corpus's source of '?', which every question needs in the vocabulary.
#[rustfmt::skip]
pub const ESSAYS: &[&str] = &["Where Now?", "Why Paint?", "What Is Music?", "Who Reads?", "Where To?"];

#[rustfmt::skip]
pub const MONTHS: &[&str] = &[
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
];

/// Name syllables: onset + vowel + coda, repeated, then an ending.
#[rustfmt::skip]
pub const ONSETS: &[&str] = &[
    "b", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr",
    "kl", "st", "th", "sh", "ch", "gr", "w", "",
];
#[rustfmt::skip]
pub const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "a", "e", "ai", "ia", "eo", "ou", "y"];
#[rustfmt::skip]
pub const CODAS: &[&str] = &["", "", "", "n", "r", "l", "s", "m", "nd", "rt", "k"];
#[rustfmt::skip]
pub const FIRST_ENDS: &[&str] = &["", "", "a", "o", "us", "ine", "el", "ia", "en", "ric"];
#[rustfmt::skip]
pub const SURNAME_ENDS: &[&str] = &[
    "son", "sen", "ov", "ski", "ez", "ini", "berg", "ford", "ley", "er", "ard", "wick", "", "",
    "mann", "escu", "opoulos", "ton", "ville", "ak",
];
