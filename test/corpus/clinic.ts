/**
 * A public-shaped schema written for the schema-linking tests (issue 13), not taken from anywhere:
 * a group of outpatient clinics. 22 tables with a geography chain (address → city → region →
 * country), lookup tables (staff roles, visit reasons, service categories, diagnosis chapters),
 * bridge tables of many-to-many links (appointment ↔ visit reason, appointment ↔ diagnosis) and
 * money in payments and invoice lines. Declared foreign keys throughout, comments on a few
 * tables and columns, a handful of rows so value sampling has something to read.
 *
 * {@link CLINIC_QUESTIONS} are questions whose answers need multi-hop joins, a measure named by a
 * synonym, or a filter value that sits in a lookup table; each lists the tables an answer needs.
 */

/** DDL and rows of the clinic schema (schema `public`). */
export const CLINIC_SQL = `
CREATE TABLE country (id integer PRIMARY KEY, name text NOT NULL, iso_code char(2) NOT NULL);
CREATE TABLE region (id integer PRIMARY KEY, country_id integer NOT NULL REFERENCES country(id), name text NOT NULL);
CREATE TABLE city (id integer PRIMARY KEY, region_id integer NOT NULL REFERENCES region(id), name text NOT NULL);
CREATE TABLE address (id integer PRIMARY KEY, city_id integer NOT NULL REFERENCES city(id), street text, postal_code text);
CREATE TABLE clinic (id integer PRIMARY KEY, name text NOT NULL, address_id integer REFERENCES address(id), opened_on date);
CREATE TABLE department (id integer PRIMARY KEY, clinic_id integer NOT NULL REFERENCES clinic(id), name text NOT NULL);
CREATE TABLE staff_role (id integer PRIMARY KEY, label text NOT NULL);
CREATE TABLE practitioner (id integer PRIMARY KEY, first_name text, last_name text,
  role_id integer REFERENCES staff_role(id), department_id integer REFERENCES department(id), hired_on date);
CREATE TABLE insurer (id integer PRIMARY KEY, name text NOT NULL, plan_tier text);
CREATE TABLE patient (id integer PRIMARY KEY, first_name text, last_name text, birth_date date,
  address_id integer REFERENCES address(id), insurer_id integer REFERENCES insurer(id));
CREATE TABLE appointment (id integer PRIMARY KEY, patient_id integer NOT NULL REFERENCES patient(id),
  practitioner_id integer NOT NULL REFERENCES practitioner(id), scheduled_at timestamp NOT NULL, status text);
CREATE TABLE visit_reason (id integer PRIMARY KEY, label text NOT NULL);
CREATE TABLE appointment_reason (appointment_id integer NOT NULL REFERENCES appointment(id),
  reason_id integer NOT NULL REFERENCES visit_reason(id), PRIMARY KEY (appointment_id, reason_id));
CREATE TABLE diagnosis_chapter (id integer PRIMARY KEY, title text NOT NULL);
CREATE TABLE diagnosis_code (id integer PRIMARY KEY, code text NOT NULL, description text,
  chapter_id integer REFERENCES diagnosis_chapter(id));
CREATE TABLE encounter_diagnosis (appointment_id integer NOT NULL REFERENCES appointment(id),
  diagnosis_code_id integer NOT NULL REFERENCES diagnosis_code(id), PRIMARY KEY (appointment_id, diagnosis_code_id));
CREATE TABLE medication (id integer PRIMARY KEY, brand_name text, generic_name text, form text);
CREATE TABLE prescription (id integer PRIMARY KEY, appointment_id integer NOT NULL REFERENCES appointment(id),
  medication_id integer NOT NULL REFERENCES medication(id), dose_mg numeric(8,2), days integer);
CREATE TABLE invoice (id integer PRIMARY KEY, appointment_id integer NOT NULL REFERENCES appointment(id),
  issued_on date, due_on date);
CREATE TABLE service_category (id integer PRIMARY KEY, name text NOT NULL);
CREATE TABLE service (id integer PRIMARY KEY, name text NOT NULL, category_id integer REFERENCES service_category(id));
CREATE TABLE invoice_line (id integer PRIMARY KEY, invoice_id integer NOT NULL REFERENCES invoice(id),
  service_id integer REFERENCES service(id), quantity integer NOT NULL, unit_price numeric(10,2) NOT NULL);
CREATE TABLE payment (id integer PRIMARY KEY, invoice_id integer NOT NULL REFERENCES invoice(id),
  paid_on date NOT NULL, amount numeric(10,2) NOT NULL, method text);
COMMENT ON TABLE payment IS 'Money received from patients or insurers against an invoice';
COMMENT ON COLUMN payment.amount IS 'Amount received, in the clinic currency';
COMMENT ON TABLE practitioner IS 'Doctors, nurses and therapists who see patients';
COMMENT ON TABLE encounter_diagnosis IS 'Diagnoses recorded during an appointment';

INSERT INTO country VALUES (1, 'Portugal', 'PT'), (2, 'Norway', 'NO');
INSERT INTO region VALUES (1, 1, 'Alentejo'), (2, 1, 'Algarve'), (3, 2, 'Vestland');
INSERT INTO city VALUES (1, 1, 'Evora'), (2, 2, 'Faro'), (3, 3, 'Bergen');
INSERT INTO address VALUES (1, 1, 'Rua Nova 1', '7000-001'), (2, 2, 'Rua do Mar 5', '8000-002'), (3, 3, 'Bryggen 3', '5003');
INSERT INTO clinic VALUES (1, 'Southside Clinic', 1, '2015-03-01'), (2, 'Harbour Clinic', 3, '2019-09-15');
INSERT INTO department VALUES (1, 1, 'Cardiology'), (2, 1, 'Dermatology'), (3, 2, 'Paediatrics');
INSERT INTO staff_role VALUES (1, 'Physician'), (2, 'Nurse'), (3, 'Therapist');
INSERT INTO practitioner VALUES (1, 'Ana', 'Silva', 1, 1, '2016-01-10'), (2, 'Ola', 'Berg', 2, 3, '2020-02-01');
INSERT INTO insurer VALUES (1, 'Mutual Health', 'gold'), (2, 'Nordic Care', 'basic');
INSERT INTO patient VALUES (1, 'Rui', 'Costa', '1980-05-04', 2, 1), (2, 'Kari', 'Lund', '1992-11-30', 3, 2);
INSERT INTO appointment VALUES (1, 1, 1, '2024-04-02 09:00', 'completed'), (2, 2, 2, '2024-05-10 14:30', 'cancelled');
INSERT INTO visit_reason VALUES (1, 'Follow-up'), (2, 'Routine check'), (3, 'Acute pain');
INSERT INTO appointment_reason VALUES (1, 1), (2, 3);
INSERT INTO diagnosis_chapter VALUES (1, 'Circulatory system'), (2, 'Skin and subcutaneous tissue');
INSERT INTO diagnosis_code VALUES (1, 'I10', 'Essential hypertension', 1), (2, 'L20', 'Atopic dermatitis', 2);
INSERT INTO encounter_diagnosis VALUES (1, 1);
INSERT INTO medication VALUES (1, 'Cardiozen', 'amlodipine', 'tablet'), (2, 'Dermacalm', 'hydrocortisone', 'cream');
INSERT INTO prescription VALUES (1, 1, 1, 5, 30);
INSERT INTO invoice VALUES (1, 1, '2024-04-02', '2024-05-02');
INSERT INTO service_category VALUES (1, 'Consultation'), (2, 'Imaging');
INSERT INTO service VALUES (1, 'Specialist consultation', 1), (2, 'Echocardiogram', 2);
INSERT INTO invoice_line VALUES (1, 1, 1, 1, 90.00), (2, 1, 2, 1, 140.00);
INSERT INTO payment VALUES (1, 1, '2024-04-20', 230.00, 'card');
`;

/** Which miss kind a question exercises. */
export type ClinicMissKind = 'multi_hop_filter' | 'synonym_measure' | 'lookup_value' | 'plain';

/** A question over the clinic schema and the tables an answer needs (any one alternative). */
export interface ClinicQuestion {
  question: string;
  kind: ClinicMissKind;
  /** Alternatives, each a list of table names (schema `public`). */
  gold: string[][];
  /** The filter is named only by a data value ("Norway"): nothing to link without sampled values. */
  valueOnly?: boolean;
}

/** Questions over {@link CLINIC_SQL}. */
export const CLINIC_QUESTIONS: readonly ClinicQuestion[] = [
  {
    question: 'How many patients live in each country?',
    kind: 'multi_hop_filter',
    gold: [['patient', 'address', 'city', 'region', 'country']],
  },
  {
    question: 'List the patients who live in Norway.',
    kind: 'multi_hop_filter',
    valueOnly: true,
    gold: [['patient', 'address', 'city', 'region', 'country']],
  },
  {
    question: 'Which clinics are located in the Algarve region?',
    kind: 'multi_hop_filter',
    gold: [['clinic', 'address', 'city', 'region']],
  },
  {
    question: 'What was the revenue of each practitioner in 2024?',
    kind: 'synonym_measure',
    gold: [
      ['practitioner', 'appointment', 'invoice', 'payment'],
      ['practitioner', 'appointment', 'invoice', 'invoice_line'],
    ],
  },
  {
    question: 'Total sales per service category last quarter',
    kind: 'synonym_measure',
    gold: [['service_category', 'service', 'invoice_line']],
  },
  {
    question: 'How many appointments did the Cardiology department have in April?',
    kind: 'lookup_value',
    gold: [['appointment', 'practitioner', 'department']],
  },
  {
    question: "List appointments whose visit reason was 'Follow-up'.",
    kind: 'lookup_value',
    gold: [['appointment', 'appointment_reason', 'visit_reason']],
  },
  {
    question: 'How many practitioners have the role Nurse?',
    kind: 'lookup_value',
    gold: [['practitioner', 'staff_role']],
  },
  {
    question: 'Which medications were prescribed to patients insured by Nordic Care?',
    kind: 'multi_hop_filter',
    gold: [['medication', 'prescription', 'appointment', 'patient', 'insurer']],
  },
  {
    question: 'Count appointments with a diagnosis in the chapter Circulatory system',
    kind: 'multi_hop_filter',
    gold: [['appointment', 'encounter_diagnosis', 'diagnosis_code', 'diagnosis_chapter']],
  },
  {
    question: 'Average dose in mg per medication form',
    kind: 'plain',
    gold: [['prescription', 'medication']],
  },
  {
    question: 'Which invoices are past their due date and have no payment yet?',
    kind: 'plain',
    gold: [['invoice', 'payment']],
  },
];
