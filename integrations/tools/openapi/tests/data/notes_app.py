"""A small notes service for ragloom's OpenAPI tests: FastAPI serves its own
/openapi.json. Run: uvicorn app:app --host 127.0.0.1 --port PORT"""
from typing import Dict, List, Optional

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

app = FastAPI(title="Notes", version="1.0.0", description="Notes with tags, kept in memory.")


class NoteIn(BaseModel):
    title: str = Field(description="A short title")
    body: str = Field("", description="The text of the note")
    tags: List[str] = Field(default_factory=list, description="Labels to find the note by")


class Note(NoteIn):
    id: int


NOTES: Dict[int, Note] = {}


@app.post("/notes", response_model=Note, status_code=201, summary="Create a note")
def create_note(note: NoteIn) -> Note:
    new = Note(id=len(NOTES) + 1, **note.model_dump())
    NOTES[new.id] = new
    return new


@app.get("/notes", response_model=List[Note], summary="List notes")
def list_notes(tag: Optional[str] = None, limit: int = 10) -> List[Note]:
    notes = [n for n in NOTES.values() if tag is None or tag in n.tags]
    return notes[:limit]


@app.get("/notes/{note_id}", response_model=Note, summary="Read one note")
def read_note(note_id: int) -> Note:
    if note_id not in NOTES:
        raise HTTPException(status_code=404, detail="Note not found")
    return NOTES[note_id]


@app.put("/notes/{note_id}", response_model=Note, summary="Replace a note")
def replace_note(note_id: int, note: NoteIn) -> Note:
    if note_id not in NOTES:
        raise HTTPException(status_code=404, detail="Note not found")
    NOTES[note_id] = Note(id=note_id, **note.model_dump())
    return NOTES[note_id]


@app.delete("/notes/{note_id}", status_code=204, summary="Delete a note")
def delete_note(note_id: int) -> None:
    NOTES.pop(note_id, None)


@app.post("/reset", status_code=204, include_in_schema=False)
def reset() -> None:
    NOTES.clear()
